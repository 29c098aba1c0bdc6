#include "lab/plan.hpp"

#include <algorithm>
#include <array>

namespace outbox::lab {

namespace {

/// Every step with the name typed after --step, in the seed's order: the
/// one list that to_string, parse_lab_step and lab_step_names read.
struct named_step {
  lab_step step;
  const char* name;
};

constexpr std::array<named_step, 8> steps = {{
    {lab_step::init, "init"},
    {lab_step::dualwrite, "dualwrite"},
    {lab_step::place_order, "place_order"},
    {lab_step::relay, "relay"},
    {lab_step::order_check, "order_check"},
    {lab_step::relay_crash, "relay_crash"},
    {lab_step::consumer, "consumer"},
    {lab_step::report, "report"},
}};

} // namespace

const char* to_string(lab_step step) {
  for (const auto& s : steps)
    if (s.step == step)
      return s.name;
  return "?";
}

std::optional<lab_step> parse_lab_step(const std::string& name) {
  for (const auto& s : steps)
    if (name == s.name)
      return s.step;
  return std::nullopt;
}

std::string lab_step_names() {
  std::string names;
  for (const auto& s : steps)
    names += (names.empty() ? "" : ", ") + std::string{s.name};
  return names;
}

std::vector<lab_step> full_lab_plan() {
  return {lab_step::init,        lab_step::dualwrite,   lab_step::place_order,
          lab_step::place_order, lab_step::place_order, lab_step::relay,
          lab_step::relay,       lab_step::order_check, lab_step::relay_crash,
          lab_step::consumer,    lab_step::report};
}

std::vector<std::filesystem::path> lab_files::resettable() const {
  std::vector<std::filesystem::path> files;
  for (const auto& db : {app_db(), dualwrite_db()})
    for (const char* suffix : {"", "-wal", "-shm", "-journal"})
      files.push_back(db.string() + suffix);
  for (const auto& out :
       {dualwrite_out(), order_check_out(), atleastonce_out(), report_txt()})
    files.push_back(out);
  return files;
}

config::settings lab_settings(config::settings base, const lab_files& files) {
  base.db.path = files.app_db().string();
  // The seed's names on one list: `outbox.events`, `processed`, ...
  base.broker = broker::keys{};
  base.lease.ttl = lab_lease_ttl_ms;
  base.run.relays = 1;
  base.run.consumers = 1;
  base.run.poll_interval_ms = 20;
  base.run.idle_poll_max_ms = 200;
  base.run.consumer_block_ms = 100;
  // The short lease must outlast a check that waits for both stores
  // (config/validate.cpp): the lab's stores are local and idle, so short
  // timeouts cost nothing.
  base.db.busy_timeout_ms = std::min(base.db.busy_timeout_ms, lab_timeout_ms);
  base.redis.io_timeout_ms = std::min(base.redis.io_timeout_ms, lab_timeout_ms);
  base.crash = config::crash_settings{};
  config::validate(base);
  return base;
}

} // namespace outbox::lab
