#include "bench/bench.hpp"

#include "bench/names.hpp"
#include "bench/process_memory.hpp"
#include "bench/stages.hpp"
#include "bench/targets.hpp"
#include "broker/connection.hpp"
#include "broker/redis_settings.hpp"
#include "pipeline/spawn_pipeline.hpp"
#include "storage/postgres/session.hpp"

#include <caf/all.hpp>
#include <sqlite3.h>
#include <sys/utsname.h>

#include <algorithm>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

namespace outbox::bench {

bench_scale bench_scale::quick() {
  bench_scale s;
  s.orders_one_per_txn = 300;
  s.orders_grouped = 30'000;
  s.relay_events = 30'000;
  s.consumer_entries = 30'000;
  s.end_to_end_orders = 30'000;
  s.fixed_load_seconds = 3;
  s.history_small = 10'000;
  s.history_large = 100'000;
  s.spread_pending = 20'000;
  s.timed_claims = 20;
  s.trim_records = 20'000;
  s.stage_timeout_s = 60;
  return s;
}

bench_scale bench_scale::tiny() {
  bench_scale s;
  s.orders_one_per_txn = 20;
  s.orders_grouped = 500;
  s.relay_events = 2'000;
  s.consumer_entries = 2'000;
  s.end_to_end_orders = 1'000;
  s.fixed_load_seconds = 1;
  s.history_small = 1'000;
  s.history_large = 5'000;
  s.spread_pending = 2'000;
  s.timed_claims = 3;
  s.trim_records = 2'000;
  s.stage_timeout_s = 60;
  s.soak_sample_ms = 5;
  return s;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

void wait_until(const std::function<bool()>& done, std::chrono::seconds limit,
                const std::string& what) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline)
      throw std::runtime_error("gave up waiting for " + what);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

namespace {

using stage = std::pair<const char*, void (*)(stage_context&)>;

const std::vector<stage>& all_stages() {
  static const std::vector<stage> stages{{"ceilings", measure_ceilings},
                                         {"writer", measure_writer},
                                         {"relay", measure_relays},
                                         {"consumer", measure_consumers},
                                         {"end_to_end", measure_end_to_end},
                                         {"growth", measure_growth},
                                         {"trim", measure_trim}};
  return stages;
}

std::string redis_version(const config::settings& s) {
  broker::connection conn{s.redis};
  auto info = broker::reply_text(*conn.command({"INFO", "server"}));
  auto at = info.find("redis_version:");
  if (at == std::string::npos)
    return "unknown";
  at += 14;
  return info.substr(at, info.find_first_of("\r\n", at) - at);
}

/// What the measured Redis keeps: its latency figures depend on whether
/// each write waits for an fsync (null where CONFIG is refused).
nlohmann::json redis_persistence(const config::settings& s) {
  broker::connection conn{s.redis};
  auto seen = broker::read_redis_settings(conn);
  auto shown = [](const std::optional<std::string>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
  };
  return {{"appendonly", shown(seen.appendonly)},
          {"appendfsync", shown(seen.appendfsync)}};
}

std::string postgres_version(const config::settings& s) {
  storage::postgres::session link{s.db};
  return link.exec("bench", "SHOW server_version").text(0, 0);
}

nlohmann::json context_of(const bench_options& o, const bench_scale& scale) {
  const auto& s = o.settings;
  utsname host{};
  ::uname(&host);
  return {
      {"quick", o.quick},
      {"machine",
       {{"cores", std::thread::hardware_concurrency()},
        {"kernel", std::string{host.sysname} + " " + host.release},
        // The database measured: "sqlite" (its library) or "postgres"
        // (the server's version).
        {s.db.postgres() ? "postgres" : "sqlite",
         s.db.postgres() ? postgres_version(s)
                         : std::string{sqlite3_libversion()}},
        {"redis", redis_version(s)}}},
      {"redis_persistence", redis_persistence(s)},
      {"settings",
       {{"db.synchronous", s.db.synchronous},
        {"lease.batch", s.lease.batch},
        {"run.commit_batch", s.run.commit_batch},
        {"run.commit_delay_ms", s.run.commit_delay_ms},
        {"run.max_in_flight", s.run.max_in_flight},
        {"run.relays", s.run.relays},
        {"run.consumers", s.run.consumers},
        {"broker.partitions", s.broker.partitions}}},
      {"scale",
       {{"orders_one_per_txn", scale.orders_one_per_txn},
        {"orders_grouped", scale.orders_grouped},
        {"relay_events", scale.relay_events},
        {"consumer_entries", scale.consumer_entries},
        {"end_to_end_orders", scale.end_to_end_orders},
        {"fixed_load_seconds", scale.fixed_load_seconds},
        {"history_small", scale.history_small},
        {"history_large", scale.history_large},
        {"spread_pending", scale.spread_pending},
        {"trim_records", scale.trim_records},
        {"soak_events", scale.soak_events}}},
  };
}

} // namespace

const std::vector<std::string>& stage_names() {
  static const auto names =
      names_of(all_stages(), [](const stage& s) { return s.first; });
  return names;
}

nlohmann::json run_bench(const bench_options& options) {
  auto progress =
      options.progress ? options.progress : [](const std::string&) {};
  broker::connection{options.settings.redis}.ensure_connected();
  auto scale = options.scale   ? *options.scale
               : options.quick ? bench_scale::quick()
                               : bench_scale::full();
  scale.soak_events = options.soak_events;
  auto context = context_of(options, scale);
  if (!options.stages.empty())
    context["stages"] = options.stages;
  auto started = std::chrono::steady_clock::now();

  caf::actor_system_config cfg;
  pipeline::configure_system(cfg);
  caf::actor_system system{cfg};
  workspace space{options.scratch_parent, options.settings};
  results out;
  stage_context ctx{space, scale, out, system, progress, options.program};
  auto errors = nlohmann::json::array();
  // Each stage's peak resident memory, added after the stages so that the
  // table keeps one section per stage.
  std::vector<measurement> memory;
  std::vector<stage> stages;
  if (scale.soak_events > 0)
    stages.push_back({"soak", measure_soak});
  else
    for (const auto& s : all_stages())
      if (options.stages.empty() ||
          std::count(options.stages.begin(), options.stages.end(), s.first))
        stages.push_back(s);
  for (auto [name, run] : stages) {
    bool reset = reset_peak_resident();
    try {
      run(ctx);
    } catch (const std::exception& e) {
      errors.push_back({{"stage", name}, {"error", e.what()}});
      progress(std::string{name} + " failed: " + e.what());
    }
    if (auto peak = peak_resident_mib(); peak && reset)
      memory.push_back({"memory", std::string{"rss_peak_"} + name,
                        std::string{"peak resident memory of this process, "} +
                            name + " stage",
                        *peak, "MiB", ""});
  }
  for (auto& m : memory)
    out.add(std::move(m));
  check_targets(out, context, options.targets);
  context["seconds"] = seconds_since(started);
  context["errors"] = errors;
  context["ok"] = errors.empty();
  return out.to_json(context);
}

} // namespace outbox::bench
