#pragma once

#include "metrics/pipeline_snapshot.hpp"
#include "metrics/run_metrics.hpp"

#include <string>

namespace outbox::metrics {

/// What a run's report is made of.
struct run_outcome {
  pipeline_snapshot final_state;
  /// audit::verdict::to_json() of the final state, and whether it holds.
  std::string audit_json;
  bool audit_ok = false;
  /// Why the run failed outside the audit (restart budget...); may be empty.
  std::string failure;
  /// A bounded run must leave nothing PENDING or SENDING behind.
  bool must_be_drained = false;
  double seconds = 0;
  int relays = 0;
  int consumers = 0;
  /// Orders this process was to place (run.orders).
  std::int64_t orders_target = 0;
  /// A bounded run stopped on request (SIGINT, SIGTERM) before it drained:
  /// the report says what it left undone instead of "not drained".
  bool interrupted = false;
  /// The command ("run", "relay", "consume", "write").
  std::string role = "run";
  /// A bounded run audits the stores at its end and fails on what the
  /// audit finds, or on a final state it cannot read. An unbounded one (a
  /// service, stopped by a signal) does neither: it fails only on its own
  /// failure, and leaves the store-wide audit to `outbox verify`.
  bool audited = true;
  /// SENDING rows left under leases of relays that are gone, and when
  /// their leases expire (coordinator_progress.hpp); empty when none.
  std::string stranded_leases;
};

/// The run's JSON report: counts from the stores, this process's counters,
/// throughput, latency percentiles, the audit, and "ok" with "violations"
/// naming what broke.
std::string run_report_json(const run_outcome& outcome,
                            const run_metrics& metrics);

/// The human summary of a report produced by run_report_json
/// (run_report_text.cpp): this run's counters apart from the store-wide
/// totals, the audit's checks, figures rounded, English plurals.
std::string run_report_text(const std::string& report_json);

/// For a report whose run was interrupted: what it left undone, in one
/// line for stderr ("interrupted before the run drained; left undone: 917
/// of 2000 orders not placed, ..."). Empty for a run that was not.
std::string run_report_interruption(const std::string& report_json);

/// Whether the report says every invariant held.
bool run_report_ok(const std::string& report_json);

/// The violation that says the end of the run could not read the stores.
inline constexpr const char* unread_state_violation =
    "could not read the final state: ";

/// Why a report is not ok, in one line for stderr: the final state could
/// not be read (the stores were out), or the first violation and how many
/// more there are.
std::string run_report_failure(const std::string& report_json);

} // namespace outbox::metrics
