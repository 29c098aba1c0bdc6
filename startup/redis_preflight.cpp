#include "startup/redis_preflight.hpp"

#include "broker/command_access.hpp"
#include "broker/connection.hpp"
#include "broker/partitions_record.hpp"
#include "text/terminal_text.hpp"

#include <sstream>

namespace outbox::startup {

namespace {

/// The fix for an evicting policy, in the words an operator types.
constexpr const char* eviction_fix =
    "CONFIG SET maxmemory-policy noeviction (and the same in redis.conf)";

std::string eviction_risk(const std::string& policy) {
  std::string risk =
      "maxmemory-policy is " + policy +
      ": once Redis reaches maxmemory it deletes keys, dropping queued "
      "events (lost) or dedup records (their redeliveries applied twice)";
  // volatile-* only evicts keys with a ttl. The pipeline's data keys have
  // none, but the consumers' lock has one, and nothing stops a ttl from
  // being put on a key later; judged like the others.
  if (policy.rfind("volatile-", 0) == 0)
    risk += " (volatile-* evicts only keys with a ttl, such as the "
            "consumers' lock)";
  return risk;
}

} // namespace

verdict judge_redis(const broker::redis_settings& seen, bool allow_evicting,
                    int min_replica_acks) {
  verdict judged;
  if (!seen.config_error.empty())
    judged.warn(
        "cannot read Redis's settings (CONFIG GET: " + seen.config_error +
        "); not checked: maxmemory-policy must be noeviction and AOF "
        "(appendonly yes) should be on, or Redis itself can lose events");
  if (seen.may_evict()) {
    auto risk = eviction_risk(*seen.maxmemory_policy);
    if (allow_evicting)
      judged.warn("Redis " + risk +
                  "; starting anyway (--allow-evicting-redis)");
    else
      judged.refuse(outcome::refused_failure,
                    "refusing to start: Redis " + risk +
                        ". Fix: " + eviction_fix +
                        "; or accept the risk with --allow-evicting-redis "
                        "(redis.allow_evicting)");
  }
  if (seen.persists_nothing())
    judged.warn(
        "Redis has no persistence (appendonly no, save \"\"): a Redis restart "
        "loses every queued event and every dedup record (redeliveries are "
        "then applied twice). Fix: CONFIG SET appendonly yes");
  // Negative: this process pushes nothing (no relays), nothing to warn of.
  if (min_replica_acks < 0)
    return judged;
  auto replicas = seen.replicas.value_or(0);
  if (replicas > 0 && min_replica_acks == 0)
    judged.warn(
        "Redis has " + std::to_string(replicas) + " replica" +
        (replicas == 1 ? "" : "s") +
        " and redis.min_replica_acks is 0: a push the master acknowledged "
        "but had not copied yet is lost if it fails over before it does "
        "(replication is asynchronous). Fix: redis.min_replica_acks 1");
  if (seen.replicas && static_cast<std::size_t>(min_replica_acks) > replicas)
    judged.warn("redis.min_replica_acks is " +
                std::to_string(min_replica_acks) + " but Redis has " +
                std::to_string(replicas) +
                " replicas connected: the relays wait until that many are");
  return judged;
}

verdict check_redis_settings(broker::connection& conn,
                             const config::settings& s) {
  return judge_redis(broker::read_redis_settings(conn), s.allow_evicting_redis,
                     s.run.relays > 0 ? s.redis.min_replica_acks : -1);
}

verdict check_commands(broker::connection& conn, const config::settings& s) {
  verdict judged;
  auto refused = broker::refused_commands(conn, s.broker, s.run.relays > 0,
                                          s.run.consumers > 0);
  if (refused.empty())
    return judged;
  const auto& o = s.redis;
  auto user = o.username.empty() ? std::string{"default"} : o.username;
  std::ostringstream said;
  said << "Redis at " << conn.options().where.to_string() << " refuses user \""
       << text::escaped(user)
       << "\" commands this run needs (not an outage: fix the ACL or the "
          "proxy): "
       << text::escaped(broker::describe(refused, 5));
  judged.refuse(outcome::refused_usage, said.str());
  return judged;
}

verdict check_partitions(broker::connection& conn, const config::settings& s) {
  verdict judged;
  auto agreement = broker::agree_on_partitions(conn, s.broker);
  auto ours = agreement.ours;
  if (!agreement.recorded) {
    std::ostringstream said;
    said << "cannot record broker.partitions (" << ours
         << ") in Redis now: " << text::escaped(agreement.unrecorded);
    judged.warn(said.str());
    return judged;
  }
  if (agreement.agreed())
    return judged;
  auto recorded = *agreement.recorded;
  const auto key = s.broker.partitions_record();
  std::ostringstream said;
  said << "broker.partitions is " << ours << " here, but " << recorded
       << " is recorded in Redis (" << key
       << ") by the first process: with two counts one aggregate's "
          "events go to two lists and can be applied out of order. Use "
       << recorded
       << " (--partitions or broker.partitions), or change the count: "
          "drain the queues with the old count (outbox status shows "
          "QUEUED and PROCESSING at 0), stop every process, DEL "
       << key << ", then start them with the new count";
  judged.refuse(outcome::refused_usage, said.str());
  return judged;
}

} // namespace outbox::startup
