#pragma once

// One pipeline in this process, as `outbox run` and the bench's end-to-end
// stage run it: the ports on the real stores (adapters/), the actor
// system's types, and the coordinator (actors/coordinator.hpp) that spawns
// and supervises the writer, relays and consumers. What differs between
// those who run one is in pipeline_hooks; nothing here prints, parses
// flags or reads signals: that is the tools' part.

#include "actors/interfaces.hpp"
#include "actors/progress_line.hpp"
#include "adapters/sink_apply.hpp"
#include "broker/inbox_options.hpp"
#include "config/settings.hpp"
#include "metrics/run_metrics.hpp"

#include <caf/fwd.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace outbox::pipeline {

/// What a tool decides about its pipeline beyond the settings.
struct pipeline_hooks {
  /// The command that runs it ("run", "relay", "consume", "write"): the
  /// report's header.
  std::string role = "run";
  /// End once the load is committed and everything drained; otherwise run
  /// until told to stop (actors::shutdown_atom).
  bool until_drained = false;
  /// Prefix of every relay and consumer name (host and pid for `outbox
  /// run`), so names are unique across processes sharing one database.
  std::string name_prefix;
  /// Who this process is in the consumers' lock and the relay heartbeats;
  /// "" runs its consumers without the lock and its fence (one consuming
  /// process by construction: the bench, tools).
  std::string consumer_lock_holder;
  /// What the consumers' inbox script is given (unknown types, effects).
  broker::inbox_options inbox;
  /// The consumers' own database, when consumer.sink names one.
  std::optional<adapters::consumer_sink> sink;
  /// Called with what the progress line shows, every progress_interval_ms.
  std::function<void(const actors::run_progress&)> progress;
  int progress_interval_ms = 1000;
  /// Where the run counts; a fresh one when empty.
  std::shared_ptr<metrics::run_metrics> metrics;
};

/// Registers outbox's message types and tunes CAF's scheduler: call on the
/// configuration before the actor_system is built from it.
void configure_system(caf::actor_system_config& cfg);

/// Spawns the coordinator of a pipeline over the stores `s` names, on a
/// thread of its own. It starts when sent actors::run_atom (await_report).
actors::coordinator_handle spawn_pipeline(caf::actor_system& system,
                                          const config::settings& s,
                                          pipeline_hooks hooks);

/// The end of a run: the coordinator's report (JSON), or why there is none.
struct pipeline_outcome {
  std::string report;
  std::string error;
};

/// Starts the coordinator and waits for its report, at most `timeout`
/// (none when zero). One that gives none in time is stopped, its linked
/// children with it; either way the coordinator is gone on return.
pipeline_outcome await_report(caf::actor_system& system,
                              const actors::coordinator_handle& coordinator,
                              std::chrono::milliseconds timeout = {});

} // namespace outbox::pipeline
