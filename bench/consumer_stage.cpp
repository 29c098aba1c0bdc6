// Consumers: consumer actors draining prefilled queues through the inbox
// (dedup + effect).

#include "actors/consumer.hpp"
#include "adapters/redis_ports.hpp"
#include "bench/cpu_meter.hpp"
#include "bench/fill.hpp"
#include "bench/stages.hpp"
#include "bench/timed_actors.hpp"
#include "text/plural.hpp"

#include <caf/all.hpp>

#include <vector>

namespace outbox::bench {

namespace {

/// Runs `consumers` consumers over `entries` queued entries until each is
/// applied. Returns entries per second.
double consumer_rate(stage_context& ctx, const config::settings& s,
                     int consumers, std::int64_t entries) {
  auto metrics = std::make_shared<metrics::run_metrics>();
  auto seconds = time_actors_until(
      ctx, consumers,
      [&](int i) {
        actors::consumer_setup cs;
        cs.name = "bench-consumer-" + std::to_string(i);
        cs.names = s.broker;
        cs.queues = s.broker.owned_partitions(
            static_cast<std::size_t>(i), static_cast<std::size_t>(consumers));
        cs.block_ms = s.run.consumer_block_ms;
        cs.make_port = [s] {
          return adapters::make_redis_consume_port(s.redis, s.broker);
        };
        cs.clock = storage::wall_clock_now;
        cs.metrics = metrics;
        return ctx.system.spawn<caf::detached>(actors::consumer, cs);
      },
      [&] { return metrics->applied.load() >= entries; },
      "the consumers to apply every entry");
  return static_cast<double>(entries) / seconds;
}

} // namespace

void measure_consumers(stage_context& ctx) {
  auto entries = ctx.scale.consumer_entries;
  for (int consumers : {1, 2}) {
    auto shape = text::plural(consumers, "consumer");
    ctx.progress("consumer: " + shape);
    auto s = ctx.space.fresh("consumer", ctx.space.base().db.synchronous);
    fill_queues(s, entries, "consumer");
    cpu_meter cpu{s};
    ctx.out.add({"consumer", "consumer_" + std::to_string(consumers),
                 shape + ", dedup + effect from the queues",
                 consumer_rate(ctx, s, consumers, entries), "entries/s",
                 "inbox_batched"},
                consumers == 1
                    ? ""
                    : "the ceiling is one connection calling the script "
                      "back to back, Redis idle during each round trip; " +
                          shape +
                          " keep it busy while one of them waits for its "
                          "reply");
    if (consumers == 1) {
      ctx.out.add(
          {"consumer", "consumer_cpu", "CPU per entry, 1 consumer, in outbox",
           1e6 * cpu.own_seconds() / static_cast<double>(entries), "us", ""});
      ctx.out.add({"consumer", "consumer_redis_cpu",
                   "CPU per entry, 1 consumer, in Redis",
                   1e6 * cpu.redis_seconds() / static_cast<double>(entries),
                   "us", ""});
    }
  }
  ctx.space.clear_redis();
}

} // namespace outbox::bench
