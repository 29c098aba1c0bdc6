// Relays: N relay actors moving a prefilled outbox from PENDING to
// PUBLISHED-and-in-Redis.

#include "actors/redis_ports.hpp"
#include "actors/relay.hpp"
#include "bench/actor_group.hpp"
#include "bench/cpu_meter.hpp"
#include "bench/fill.hpp"
#include "bench/stages.hpp"
#include "broker/connection.hpp"

#include <caf/all.hpp>
#include <hiredis/hiredis.h>

#include <stdexcept>
#include <thread>
#include <vector>

namespace outbox::bench {

namespace {

std::int64_t queued(const config::settings& s) {
  broker::connection conn{s.redis};
  std::int64_t total = 0;
  for (std::size_t p = 0; p < std::max<std::size_t>(s.broker.partitions, 1);
       ++p)
    total += conn.command({"LLEN", s.broker.partition(p)})->integer;
  return total;
}

/// Runs `relays` relays over `events` PENDING rows until every row is
/// acknowledged. Returns events per second.
double relay_rate(stage_context& ctx, const config::settings& s, int relays,
                  std::int64_t events) {
  auto metrics = std::make_shared<actors::run_metrics>();
  actor_group running{ctx.system};
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < relays; ++i) {
    actors::relay_setup rs{
        "bench-relay-" + std::to_string(i),
        s.db.for_relay(),
        s.lease,
        s.run.poll_interval_ms,
        s.run.idle_poll_max_ms,
        {},
        [s] { return actors::make_redis_publish_port(s.redis, s.broker); },
        storage::wall_clock_now,
        metrics};
    running.add(ctx.system.spawn<caf::detached>(actors::relay, rs));
  }
  wait_until([&] { return metrics->acked.load() >= events; },
             std::chrono::seconds(ctx.scale.stage_timeout_s),
             "the relays to publish every row");
  auto seconds = seconds_since(start);
  running.stop();
  if (auto in_redis = queued(s); in_redis != events)
    throw std::runtime_error("relay stage: " + std::to_string(events) +
                             " rows acknowledged but " +
                             std::to_string(in_redis) + " entries queued");
  return static_cast<double>(events) / seconds;
}

} // namespace

void measure_relays(stage_context& ctx) {
  auto events = ctx.scale.relay_events;
  for (int relays : {1, 2, 4}) {
    ctx.progress("relay: " + std::to_string(relays) + " relay(s)");
    auto s = ctx.space.fresh("relay", ctx.space.base().db.synchronous);
    // Two events per aggregate, as orders with a follow-up.
    fill_outbox(s.db, events, events / 2, "PENDING", "relay");
    cpu_meter cpu{s};
    ctx.out.add({"relay", "relay_" + std::to_string(relays),
                 std::to_string(relays) +
                     " relay(s), PENDING to PUBLISHED and in Redis",
                 relay_rate(ctx, s, relays, events), "events/s",
                 "relay_serial"});
    if (relays == 1)
      ctx.out.add({"relay", "relay_cpu",
                   "CPU per event, 1 relay (outbox + Redis)",
                   1e6 * (cpu.own_seconds() + cpu.redis_seconds()) /
                       static_cast<double>(events),
                   "us", ""});
  }
  ctx.space.clear_redis();
}

} // namespace outbox::bench
