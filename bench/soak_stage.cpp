// Soak: whether a relay process and a consumer process keep their resident
// memory flat over millions of events, once their caches are warm. Each
// runs as `outbox run` does in production (a relay-only process over a
// prefilled outbox, then a consumer-only process over what it queued),
// sampled from outside through /proc.

#include "bench/fill.hpp"
#include "bench/process_config.hpp"
#include "bench/process_group.hpp"
#include "bench/process_memory.hpp"
#include "bench/stages.hpp"
#include "broker/connection.hpp"
#include "text/plural.hpp"

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <thread>
#include <vector>

namespace outbox::bench {

namespace {

using clock = std::chrono::steady_clock;

/// One look at the process from outside.
struct sample {
  std::int64_t done = 0;
  double rss_mib = 0;
  double cpu_seconds = 0;
};

/// Runs `args` as one `outbox` process until `done()` reaches `events`,
/// sampling its resident memory every `period`. Throws when it exits or
/// stops moving for the stage's timeout.
std::vector<sample> run_sampled(stage_context& ctx,
                                const std::vector<std::string>& args,
                                const std::string& name, std::int64_t events,
                                const std::function<std::int64_t()>& done) {
  constexpr auto period = std::chrono::milliseconds(250);
  process_group process{ctx.program, {args}, ctx.space.folder(), name};
  std::vector<sample> samples;
  auto moved_at = clock::now();
  std::int64_t last = -1;
  for (;;) {
    try {
      process.check_running();
    } catch (const std::runtime_error& e) {
      throw std::runtime_error("soak: " + name + " process: " + e.what());
    }
    sample now{done(), resident_mib(process.pid(0)).value_or(0),
               process.cpu_seconds().at(0)};
    samples.push_back(now);
    if (now.done >= events)
      return samples;
    if (now.done != last) {
      last = now.done;
      moved_at = clock::now();
    } else if (clock::now() - moved_at >
               std::chrono::seconds(ctx.scale.stage_timeout_s)) {
      throw std::runtime_error("soak: the " + name + " process did nothing " +
                               "for " +
                               std::to_string(ctx.scale.stage_timeout_s) +
                               " s at " + std::to_string(now.done) + " of " +
                               std::to_string(events) + " events");
    }
    std::this_thread::sleep_for(period);
  }
}

/// The first sample at or past `share` of `events`.
const sample& at_share(const std::vector<sample>& samples, double share,
                       std::int64_t events) {
  for (const auto& s : samples)
    if (static_cast<double>(s.done) >= share * static_cast<double>(events))
      return s;
  return samples.back();
}

/// Adds the figures of one process: its resident memory at half way, at
/// the end and at its peak, the growth over the second half, and its CPU
/// per event.
void add_figures(stage_context& ctx, const std::string& role,
                 const std::string& shape, const std::vector<sample>& samples,
                 std::int64_t events) {
  const auto& half = at_share(samples, 0.5, events);
  const auto& end = samples.back();
  double peak = 0;
  for (const auto& s : samples)
    peak = std::max(peak, s.rss_mib);
  auto id = "soak_" + role + "_";
  ctx.out.add({"soak", id + "rss_half", shape + ", resident half way",
               half.rss_mib, "MiB", ""});
  ctx.out.add({"soak", id + "rss_end", shape + ", resident at the end",
               end.rss_mib, "MiB", ""});
  ctx.out.add(
      {"soak", id + "rss_peak", shape + ", peak resident", peak, "MiB", ""});
  ctx.out.add({"soak", id + "rss_growth",
               shape + ", resident memory gained in the second half",
               end.rss_mib - half.rss_mib, "MiB", ""});
  ctx.out.add({"soak", id + "cpu", shape + ", CPU per event, the process",
               1e6 * end.cpu_seconds / static_cast<double>(events), "us", ""});
}

} // namespace

void measure_soak(stage_context& ctx) {
  if (ctx.program.empty())
    throw std::runtime_error("soak: it runs outbox processes, and no program "
                             "was given");
  auto events = ctx.scale.soak_events;
  auto s = ctx.space.fresh("soak", "NORMAL");
  ctx.progress("soak: filling the outbox with " + std::to_string(events) +
               " events");
  // Two events per aggregate, as orders with a follow-up.
  fill_outbox(s.db, events, events / 2, "PENDING", "soak");
  auto config = write_process_config(ctx, s, "soak.json");
  auto run_args = [&](const char* relays, const char* consumers) {
    return std::vector<std::string>{
        "run",  "--config",    config,    "--relays",
        relays, "--consumers", consumers, "--orders",
        "0",    "--log-level", "warn",    "--bench-keyspace"};
  };
  broker::connection conn{s.redis};

  ctx.progress("soak: one relay process");
  auto relay = run_sampled(ctx, run_args("1", "0"), "soak-relay", events,
                           [&] { return queued_entries(conn, s.broker); });
  add_figures(ctx, "relay", "relay process", relay, events);

  ctx.progress("soak: one consumer process");
  auto consumer =
      run_sampled(ctx, run_args("0", "1"), "soak-consumer", events, [&] {
        auto r = conn.command({"HGET", s.broker.counters, "consumed"});
        auto text = broker::reply_text(*r);
        return text.empty() ? std::int64_t{0} : std::stoll(text);
      });
  add_figures(ctx, "consumer", "consumer process", consumer, events);
  ctx.space.clear_redis();
}

} // namespace outbox::bench
