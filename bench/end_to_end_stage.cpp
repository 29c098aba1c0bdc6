// End to end: writer, relays and consumers under the coordinator, as
// `outbox run` runs them: first as fast as they go, then at a fixed offered
// load of a fifth of that for commit-to-processed latency.

#include "bench/cpu_meter.hpp"
#include "bench/stages.hpp"
#include "metrics/run_report_json.hpp"
#include "pipeline/spawn_pipeline.hpp"
#include "text/plural.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace outbox::bench {

namespace {

/// One bounded run; returns its report (throws if it did not end well).
metrics::run_report pipeline_run(stage_context& ctx,
                                 const config::settings& s) {
  pipeline::pipeline_hooks hooks;
  hooks.until_drained = true;
  hooks.name_prefix = "bench";
  auto outcome = pipeline::await_report(
      ctx.system, pipeline::spawn_pipeline(ctx.system, s, std::move(hooks)),
      std::chrono::seconds(ctx.scale.stage_timeout_s));
  const auto& report = outcome.report;
  if (report.empty())
    throw std::runtime_error("end-to-end run failed: " + outcome.error);
  auto parsed = metrics::run_report_from_json(report);
  if (!parsed)
    throw std::runtime_error("end-to-end run gave no report: " + report);
  if (!parsed->ok)
    throw std::runtime_error("end-to-end run broke an invariant: " + report);
  return *parsed;
}

config::settings run_settings(stage_context& ctx, std::int64_t orders,
                              int rate) {
  auto s = ctx.space.fresh("end-to-end", ctx.space.base().db.synchronous);
  s.run.orders = orders;
  s.run.orders_per_second = rate;
  s.run.followup_share = 0;
  s.run.relays = std::max(s.run.relays, 1);
  s.run.consumers = std::max(s.run.consumers, 1);
  return s;
}

} // namespace

void measure_end_to_end(stage_context& ctx) {
  auto orders = ctx.scale.end_to_end_orders;
  ctx.progress("end to end: as fast as possible");
  auto s = run_settings(ctx, orders, 0);
  auto shape = text::plural(s.run.relays, "relay") + ", " +
               text::plural(s.run.consumers, "consumer");
  cpu_meter cpu{s};
  auto started = std::chrono::steady_clock::now();
  auto full = pipeline_run(ctx, s);
  // The CPU was read over the whole run, its start and final audit
  // included; cores busy divide it by that same span, not by the run's
  // own seconds (committed to drained), which gave more cores than exist.
  auto measured = seconds_since(started);
  auto seconds = full.seconds;
  auto max_rate = static_cast<double>(orders) / seconds;
  ctx.out.add({"end_to_end", "end_to_end_orders",
               "orders committed, published and applied (" + shape + ")",
               max_rate, "orders/s",
               "writer_group_" + ctx.space.durability(s)});
  // Where the time went: on a small machine the cores kept busy by this
  // process and by Redis show whether the run was simply CPU-bound.
  ctx.out.add({"end_to_end", "cpu_outbox",
               "cores busy in outbox (writer, relays, consumers, actors)",
               cpu.own_seconds() / measured, "cores", ""});
  ctx.out.add({"end_to_end", "cpu_redis", "cores busy in redis-server",
               cpu.redis_seconds() / measured, "cores", ""});
  if (ctx.space.postgres())
    ctx.out.add({"end_to_end", "cpu_postgres",
                 "cores busy in the PostgreSQL server (0: not on this "
                 "machine)",
                 cpu.database_seconds() / measured, "cores", ""});
  ctx.out.add(
      {"end_to_end", "cpu_per_order",
       ctx.space.postgres()
           ? "CPU per order, outbox + Redis + PostgreSQL (audit "
             "included)"
           : "CPU per order, outbox + Redis (audit included)",
       1e6 *
           (cpu.own_seconds() + cpu.redis_seconds() + cpu.database_seconds()) /
           static_cast<double>(orders),
       "us", ""});

  auto rate = std::max(1, static_cast<int>(max_rate / 5));
  auto paced_orders =
      static_cast<std::int64_t>(rate) * ctx.scale.fixed_load_seconds;
  ctx.progress("end to end: fixed load of " + std::to_string(rate) +
               " orders/s");
  auto paced = pipeline_run(ctx, run_settings(ctx, paced_orders, rate));
  ctx.out.add({"end_to_end", "fixed_load", "fixed offered load (a fifth)",
               static_cast<double>(rate), "orders/s", ""});
  const auto& latency = paced.latency_ms;
  for (auto [p, ms] :
       {std::pair{"p50", latency.p50}, std::pair{"p95", latency.p95},
        std::pair{"p99", latency.p99}})
    ctx.out.add(
        {"end_to_end", std::string{"latency_"} + p,
         std::string{"commit-to-processed latency "} + p + " at the fixed load",
         ms, "ms", ""});
  ctx.space.clear_redis();
}

} // namespace outbox::bench
