#include "bench/cpu_meter.hpp"

#include "bench/process_cpu.hpp"
#include "broker/connection.hpp"

#include <sys/resource.h>

#include <cstring>
#include <string>

namespace outbox::bench {

namespace {

double own_cpu_seconds() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& tv) {
    return static_cast<double>(tv.tv_sec) + tv.tv_usec / 1e6;
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

} // namespace

double redis_cpu_seconds(const config::settings& s) {
  broker::connection conn{s.redis};
  auto info = broker::reply_text(*conn.command({"INFO", "cpu"}));
  double total = 0;
  for (const char* field : {"used_cpu_sys:", "used_cpu_user:"}) {
    auto at = info.find(field);
    if (at != std::string::npos)
      total += std::stod(info.substr(at + std::strlen(field)));
  }
  return total;
}

cpu_meter::cpu_meter(const config::settings& s)
    : settings_(s), own_start_(own_cpu_seconds()),
      redis_start_(redis_cpu_seconds(s)) {
  if (s.db.postgres())
    postmaster_ = local_postmaster(s.db);
  if (postmaster_)
    database_start_ = server_cpu_seconds(*postmaster_);
}

double cpu_meter::own_seconds() const {
  return own_cpu_seconds() - own_start_;
}

double cpu_meter::redis_seconds() const {
  return redis_cpu_seconds(settings_) - redis_start_;
}

double cpu_meter::database_seconds() const {
  return postmaster_ ? server_cpu_seconds(*postmaster_) - database_start_ : 0;
}

} // namespace outbox::bench
