// Relays: N relay actors moving a prefilled outbox from PENDING to
// PUBLISHED-and-in-Redis.

#include "actors/relay.hpp"
#include "adapters/redis_ports.hpp"
#include "bench/cpu_meter.hpp"
#include "bench/fill.hpp"
#include "bench/relay_processes.hpp"
#include "bench/stages.hpp"
#include "bench/timed_actors.hpp"
#include "broker/broker_stats.hpp"
#include "broker/connection.hpp"
#include "broker/redis_settings.hpp"
#include "text/plural.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <stdexcept>
#include <thread>
#include <vector>

namespace outbox::bench {

namespace {

/// Runs `relays` relays over `events` PENDING rows until every row is
/// acknowledged. Returns events per second.
double relay_rate(stage_context& ctx, const config::settings& s, int relays,
                  std::int64_t events) {
  auto metrics = std::make_shared<metrics::run_metrics>();
  auto seconds = time_actors_until(
      ctx, relays,
      [&](int i) {
        actors::relay_setup rs{"bench-relay-" + std::to_string(i),
                               s.db.for_relay(),
                               s.lease,
                               s.run.poll_interval_ms,
                               s.run.idle_poll_max_ms,
                               {},
                               [s] {
                                 return adapters::make_redis_publish_port(
                                     s.redis, s.broker);
                               },
                               storage::wall_clock_now,
                               metrics};
        return caf::actor_cast<caf::actor>(ctx.system.spawn<caf::detached>(
            actors::relay, rs, actors::ready_listener_actor{}));
      },
      [&] { return metrics->acked.load() >= events; },
      "the relays to publish every row");
  // Acknowledged rows must all be in Redis, over every partition. A relay
  // that waits for replicas pushes a batch again when WAIT times out, so
  // there may be more entries than rows then, never fewer.
  broker::connection conn{s.redis};
  auto in_redis = broker::read_stats(conn, s.broker).queued_total();
  if (in_redis < events || (in_redis > events && s.redis.min_replica_acks == 0))
    throw std::runtime_error("relay stage: " + std::to_string(events) +
                             " rows acknowledged but " +
                             std::to_string(in_redis) + " entries queued");
  return static_cast<double>(events) / seconds;
}

/// One relay whose every push waits for a replica (redis.min_replica_acks
/// 1), as a share of relay_1, measured in the same run: what acknowledged-
/// means-replicated costs. Only where the master has a replica to wait
/// for (scripts/redis sentinel start gives one); else said, not faked.
void measure_replica_acks(stage_context& ctx, std::int64_t events) {
  broker::connection conn{ctx.space.base().redis};
  auto replicas = broker::read_redis_settings(conn).replicas.value_or(0);
  if (replicas == 0) {
    ctx.progress("relay: with redis.min_replica_acks 1: not measured, " +
                 conn.options().where.to_string() +
                 " has no replica to wait for");
    return;
  }
  ctx.progress("relay: 1 relay, min_replica_acks 1");
  auto s = ctx.space.fresh("relay", ctx.space.base().db.synchronous);
  s.redis.min_replica_acks = 1;
  // The user's wait, kept below a third of the lease as `outbox run`
  // requires with acks (config/validate.cpp): their config may not ask for
  // acks, and then nothing checked it.
  s.redis.replica_ack_timeout_ms = static_cast<int>(std::min<std::int64_t>(
      s.redis.replica_ack_timeout_ms, s.lease.longest_replica_wait()));
  fill_outbox(s.db, events, events / 2, storage::row_status::pending, "relay");
  cpu_meter cpu{s};
  ctx.out.add({"relay", "relay_acks_1",
               "1 relay, each push WAITs for a replica (min_replica_acks 1)",
               relay_rate(ctx, s, 1, events), "events/s", "relay_1"},
              "relay_1 is the same relay waiting for no replica: a share "
              "over 100% is noise between the two runs");
  ctx.out.add({"relay", "relay_acks_1_cpu",
               "CPU per event, 1 relay, min_replica_acks 1 (outbox + master)",
               1e6 * (cpu.own_seconds() + cpu.redis_seconds()) /
                   static_cast<double>(events),
               "us", ""});
}

} // namespace

void measure_relays(stage_context& ctx) {
  if (ctx.space.postgres())
    return measure_relay_processes(ctx);
  auto events = ctx.scale.relay_events;
  for (int relays : {1, 2, 4}) {
    auto shape = text::plural(relays, "relay");
    ctx.progress("relay: " + shape);
    auto s = ctx.space.fresh("relay", ctx.space.base().db.synchronous);
    // Two events per aggregate, as orders with a follow-up.
    fill_outbox(s.db, events, events / 2, storage::row_status::pending,
                "relay");
    cpu_meter cpu{s};
    ctx.out.add({"relay", "relay_" + std::to_string(relays),
                 shape + ", PENDING to PUBLISHED and in Redis",
                 relay_rate(ctx, s, relays, events), "events/s",
                 "relay_serial"},
                relays == 1 ? ""
                            : "the ceiling is one relay doing its database "
                              "work and then its publish; " +
                                  shape +
                                  " overlap one's publish with another's "
                                  "claim and ack");
    if (relays == 1)
      ctx.out.add({"relay", "relay_cpu",
                   "CPU per event, 1 relay (outbox + Redis)",
                   1e6 * (cpu.own_seconds() + cpu.redis_seconds()) /
                       static_cast<double>(events),
                   "us", ""});
  }
  measure_replica_acks(ctx, events);
  ctx.space.clear_redis();
}

} // namespace outbox::bench
