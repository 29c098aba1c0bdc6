// A connection to a master under Sentinel (connection_options::sentinel):
// where to connect is asked again on every connection, and a server that
// turns out not to be the master is left at once.

#include "broker/broker_error.hpp"
#include "broker/connection.hpp"
#include "broker/sentinel.hpp"

#include <hiredis/hiredis.h>
#include <spdlog/spdlog.h>

#include <mutex>
#include <string>

namespace outbox::broker {

namespace {

/// Says once per process, however many connections follow it, that the
/// master moved to `master`.
void announce_switch(const std::string& name, const std::string& master,
                     const std::string& before) {
  static std::mutex mutex;
  static std::string announced;
  std::lock_guard<std::mutex> lock{mutex};
  if (announced == name + " " + master)
    return;
  announced = name + " " + master;
  spdlog::warn("redis: the sentinels name {} master {} now (was {})", master,
               name, before);
}

} // namespace

void connection::follow_master() {
  auto master = ask_sentinels(*options_.sentinel);
  // The first master a connection finds is not a move.
  if (!master_known_)
    confirmed_ = master;
  options_.where = master;
  master_known_ = true;
}

void connection::confirm_master() {
  auto r = send({"ROLE"});
  // ROLE denied by an ACL or renamed away: nothing to judge by, and the
  // sentinels' word stands (a replica would refuse the first write).
  if (r->type != REDIS_REPLY_ARRAY || r->elements == 0)
    return;
  auto role = reply_text(*r->element[0]);
  if (role == "master") {
    // A move counts once the new master says it is one: sentinels that
    // disagree in the middle of a failover do not count.
    const auto& now = options_.where;
    if (now.host != confirmed_.host || now.port != confirmed_.port) {
      ++master_switches_;
      announce_switch(options_.sentinel->master_name, now.to_string(),
                      confirmed_.to_string());
      confirmed_ = now;
    }
    return;
  }
  auto where = options_.where.to_string();
  reset();
  // Sentinel answers with the old address until its failover ends, and a
  // replica it just promoted may not have switched yet: ask again later.
  throw broker_error(broker_errc::unavailable,
                     "the sentinels name " + where + " master " +
                         options_.sentinel->master_name +
                         ", but it answers ROLE " + role +
                         " (a failover under way?)",
                     server_state::read_only, where);
}

void connection::forget_master_on(const redisReply& r) {
  if (!options_.sentinel || r.type != REDIS_REPLY_ERROR)
    return;
  switch (server_state_of(reply_text(r))) {
  case server_state::read_only:
  case server_state::master_down:
  case server_state::no_replicas:
  case server_state::unblocked:
    spdlog::debug("redis {}: {}: asking the sentinels again",
                  options_.where.to_string(), reply_text(r));
    reset();
    break;
  default:
    break;
  }
}

} // namespace outbox::broker
