#pragma once

// The pipeline in this process: `outbox run` (every part, for trying it
// and for tests) and the roles a deployment runs as services, one part
// each (`outbox relay`, `outbox consume`, `outbox write`). They share this
// one start-up, run and stop; the role sets which parts run and what the
// stop report shows.

#include "cli/common_options.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace outbox::cli {

/// Which command runs the pipeline.
enum class pipeline_role {
  /// `outbox run`: the parts its flags and config ask for.
  run,
  /// `outbox relay`: relays only (run.relays, at least one).
  relay,
  /// `outbox consume`: consumers only (run.consumers, at least one).
  consume,
  /// `outbox write`: the load generator only, until its orders are
  /// committed (run.orders, at least one).
  write,
};

/// The command's name: "run", "relay", "consume", "write".
const char* role_name(pipeline_role role);

/// Flags of `outbox run` and the roles; unset ones keep the config's value.
struct run_options {
  common_options common;
  pipeline_role role = pipeline_role::run;
  std::optional<int> relays;
  std::optional<int> consumers;
  std::optional<std::int64_t> orders;
  std::optional<std::uint64_t> seed;
  std::optional<double> followup_share;
  std::optional<int> orders_per_second;
  std::optional<std::size_t> partitions;
  std::optional<double> crash_after_claim;
  std::optional<double> crash_after_publish;
  std::optional<double> crash_pause;
  std::optional<double> crash_after_pop;
  std::optional<double> crash_after_effect;
  std::optional<double> crash_after_sink_commit;
  std::optional<int> crash_recovery_pause_ms;
  int metrics_port = 0;
  std::string metrics_listen;
  bool until_drained = false;
  bool json = false;
  bool allow_evicting_redis = false;
};

/// Changes the settings once they are validated, before anything starts:
/// for a program that runs this pipeline on settings of its own making
/// (outbox-bench's processes, on the bench's keys).
using settings_adjustment = std::function<void(config::settings&)>;

/// Starts the pipeline `options` describe, runs it until it drains (a
/// bounded run, and `write`) or a stop signal, prints the report and
/// answers the exit code. An unbounded run stopped by SIGINT or SIGTERM
/// exits 0 unless this process itself failed: the store-wide audit
/// belongs to `outbox verify` and to bounded runs.
int run_pipeline(const run_options& options);

/// The same, on the validated settings changed by `adjust` first.
int run_pipeline_with(const run_options& options,
                      const settings_adjustment& adjust);

} // namespace outbox::cli
