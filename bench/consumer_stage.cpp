// Consumers: consumer actors draining prefilled queues through the inbox
// (dedup + effect).

#include "actors/consumer.hpp"
#include "adapters/redis_ports.hpp"
#include "bench/cpu_meter.hpp"
#include "bench/fill.hpp"
#include "bench/stages.hpp"
#include "bench/timed_actors.hpp"
#include "sink/sink.hpp"
#include "text/plural.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <functional>
#include <memory>
#include <vector>

namespace outbox::bench {

namespace {

using port_factory = std::function<std::unique_ptr<actors::consume_port>()>;

/// Runs `consumers` consumers over `entries` queued entries until each is
/// applied, each on a port `make_port` gives (by default the plain Redis
/// inbox's). Returns entries per second.
double consumer_rate(stage_context& ctx, const config::settings& s,
                     int consumers, std::int64_t entries,
                     port_factory make_port = {}) {
  if (!make_port)
    make_port = [s] {
      return adapters::make_redis_consume_port(s.redis, s.broker);
    };
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
        cs.make_port = make_port;
        cs.clock = storage::wall_clock_now;
        cs.metrics = metrics;
        return caf::actor_cast<caf::actor>(
            ctx.system.spawn<caf::detached>(actors::consumer, cs));
      },
      [&] { return metrics->applied.load() >= entries; },
      "the consumers to apply every entry");
  return static_cast<double>(entries) / seconds;
}

/// The effect the sink figures run: the demo's reservation, in SQL.
constexpr const char* sink_effects =
    "-- effect: OrderPlaced\n"
    "INSERT INTO bench_reserved (sku, qty) VALUES (:payload.sku, "
    ":payload.qty)\n"
    "  ON CONFLICT (sku) DO UPDATE SET qty = bench_reserved.qty + "
    "excluded.qty\n";

/// One consumer applying into a database of its own (consumer.sink): a
/// SQLite file in the workspace's folder, or on PostgreSQL the scratch
/// database. Dedup in Redis first (classify), then per batch one
/// transaction of inbox rows and effects, then Redis's records.
void measure_sink(stage_context& ctx, std::int64_t entries) {
  bool postgres = ctx.space.postgres();
  std::string kind = postgres ? "postgres" : "sqlite";
  ctx.progress("consumer: 1 consumer into a " +
               std::string{postgres ? "PostgreSQL" : "SQLite"} + " sink");
  auto s = ctx.space.fresh("sink", ctx.space.base().db.synchronous);
  adapters::consumer_sink sink;
  sink.target.location =
      postgres ? s.db.path : ctx.space.folder() + "/bench-sink.db";
  sink.consumer = s.key_prefix;
  sink::create_sink_schema(sink.target);
  sink::execute(sink.target,
                "DROP TABLE IF EXISTS bench_reserved; CREATE TABLE "
                "bench_reserved (sku TEXT PRIMARY KEY, qty BIGINT NOT NULL);"
                " DELETE FROM outbox_inbox");
  sink.effects = sink::parse_sql_effects(sink_effects, "bench.sql");
  broker::inbox_options options;
  options.sink_types = sink.effects.types();
  fill_queues(s, entries, "sink");
  cpu_meter cpu{s};
  auto rate = consumer_rate(ctx, s, 1, entries, [s, options, sink] {
    return adapters::make_redis_consume_port(s.redis, s.broker, {}, options,
                                             sink);
  });
  ctx.out.add({"consumer", "consumer_sink_" + kind,
               "1 consumer, dedup in Redis, effect + inbox row in " +
                   std::string{postgres ? "PostgreSQL" : "SQLite"},
               rate, "entries/s", "consumer_1"});
  ctx.out.add({"consumer", "consumer_sink_" + kind + "_cpu",
               "CPU per entry, 1 consumer into the sink, in outbox",
               1e6 * cpu.own_seconds() / static_cast<double>(entries), "us",
               ""});
  ctx.space.clear_redis();
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
  // Fewer entries: a database's transaction per batch is slower than one
  // script call, and the figure is a rate.
  measure_sink(ctx, std::max<std::int64_t>(1000, entries / 10));
}

} // namespace outbox::bench
