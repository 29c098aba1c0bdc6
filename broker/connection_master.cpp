// A connection to a master under Sentinel (connection_options::sentinel):
// where to connect is asked again on every connection, and a server that
// turns out not to be the master is left at once.

#include "broker/broker_error.hpp"
#include "broker/connection.hpp"
#include "broker/sentinel.hpp"

#include <hiredis/hiredis.h>
#include <spdlog/spdlog.h>

namespace outbox::broker {

void connection::follow_master() {
  auto master = ask_sentinels(*options_.sentinel);
  bool moved =
      master.host != options_.where.host || master.port != options_.where.port;
  if (master_known_ && moved) {
    ++master_switches_;
    spdlog::warn("redis: the sentinels name {} master {} now (was {})",
                 master.to_string(), options_.sentinel->master_name,
                 options_.where.to_string());
  }
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
  if (role == "master")
    return;
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
