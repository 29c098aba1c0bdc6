#pragma once

#include "bench/scale.hpp"
#include "config/settings.hpp"

#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace outbox::bench {

struct bench_options {
  /// The Redis endpoint, durability, lease and run knobs to measure with.
  /// The bench uses its own database files and key names ("bench." + key).
  config::settings settings;
  /// Smaller stages: well under a minute instead of a few minutes.
  bool quick = false;
  /// Overrides the scale quick or full picks (tests run a tiny one).
  std::optional<bench_scale> scale;
  /// The outbox-bench program: on PostgreSQL the relay stage runs relays
  /// as processes of it (pipeline_process_command: `outbox run`'s
  /// pipeline), as several hosts would; the soak runs its relay and
  /// consumer processes.
  std::string program;
  /// When above 0, a soak run: only the soak stage, over this many events.
  std::int64_t soak_events = 0;
  /// Where the scratch folder goes (the system's temp folder when empty).
  std::string scratch_parent;
  /// Told what is being measured, one line per step; may be empty.
  std::function<void(const std::string&)> progress;
  /// Targets to check instead of docs/performance.md's, by name (see
  /// target_names): the value wanted.
  std::map<std::string, double> targets;
  /// Only these stages, by name (see stage_names); all when empty. The
  /// targets of the stages left out are reported as not measured.
  std::vector<std::string> stages;
};

/// The names of the stages, in the order they run (the soak aside).
const std::vector<std::string>& stage_names();

/// Runs every stage (a soak run: the soak alone) and returns the report:
/// context (machine, settings, scale), measurements with their ceilings and
/// ratios, targets, and the errors of stages that failed ("ok" false then).
/// Throws broker::broker_error when Redis cannot be reached at the start.
nlohmann::json run_bench(const bench_options& options);

} // namespace outbox::bench
