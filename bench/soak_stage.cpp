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
  /// The kernel's high-water mark (VmHWM): peaks between two looks too.
  double peak_mib = 0;
  double cpu_seconds = 0;
};

/// Fewer looks than this over the second half cannot tell growth from a
/// reading's noise: the stage fails, asking for more events.
constexpr std::size_t min_second_half_samples = 8;

/// Runs `args` as one `outbox` process until `done()` reaches `events`,
/// sampling its resident memory every scale.soak_sample_ms. Throws when it
/// exits or stops moving for the stage's timeout.
std::vector<sample> run_sampled(stage_context& ctx,
                                const std::vector<std::string>& args,
                                const std::string& name, std::int64_t events,
                                const std::function<std::int64_t()>& done) {
  auto period = std::chrono::milliseconds(ctx.scale.soak_sample_ms);
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
    auto pid = process.pid(0);
    sample now{done(), 0, 0, process.cpu_seconds().at(0)};
    auto rss = resident_mib(pid);
    auto peak = peak_resident_mib(pid);
    // No reading (the process just exited, check_running says so next):
    // no sample, rather than a 0 that would look like memory given back.
    if (rss && peak) {
      now.rss_mib = *rss;
      now.peak_mib = *peak;
      samples.push_back(now);
      if (now.done >= events)
        return samples;
    }
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

/// The index of the first sample at or past `share` of `events`.
std::size_t at_share(const std::vector<sample>& samples, double share,
                     std::int64_t events) {
  for (std::size_t i = 0; i < samples.size(); ++i)
    if (static_cast<double>(samples[i].done) >=
        share * static_cast<double>(events))
      return i;
  return samples.size() - 1;
}

/// Adds the figures of one process: its resident memory at half way, at
/// the end and at its peak, the growth over the second half, and its CPU
/// per event.
void add_figures(stage_context& ctx, const std::string& role,
                 const std::string& shape, const std::vector<sample>& samples,
                 std::int64_t events) {
  auto half_at = at_share(samples, 0.5, events);
  if (samples.size() - 1 - half_at < min_second_half_samples)
    throw std::runtime_error(
        "soak: the " + shape + " handled the second half of " +
        std::to_string(events) + " events in fewer than " +
        std::to_string(min_second_half_samples) +
        " readings of its memory, too few to tell growth: give more events");
  const auto& half = samples[half_at];
  const auto& end = samples.back();
  // The kernel's high-water mark, but never below a reading: its RSS
  // counters are cached per CPU (a few pages off), and memory given back
  // with MADV_DONTNEED does not raise the mark first, so a reading can top
  // it by a few pages.
  double peak = end.peak_mib;
  for (const auto& s : samples)
    peak = std::max({peak, s.rss_mib, s.peak_mib});
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
  // Two events per aggregate.
  fill_outbox(s.db, events, events / 2, storage::row_status::pending, "soak");
  auto config = write_process_config(ctx, s, "soak.json");
  auto run_args = [&](const char* relays, const char* consumers) {
    return pipeline_process_args(config, relays, consumers);
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
        try {
          return text.empty() ? std::int64_t{0} : std::stoll(text);
        } catch (const std::logic_error&) {
          throw std::runtime_error("soak: the counters' consumed is not an "
                                   "integer: " +
                                   text);
        }
      });
  add_figures(ctx, "consumer", "consumer process", consumer, events);
  ctx.space.clear_redis();
}

} // namespace outbox::bench
