#pragma once

#include "metrics/audit_verdict.hpp"
#include "metrics/pipeline_snapshot.hpp"
#include "metrics/run_metrics.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace outbox::metrics {

/// What a run's report is made of.
struct run_outcome {
  pipeline_snapshot final_state;
  /// The audit of the final state; none when it was not run (a service's
  /// stop, an unread final state, a run that could not start).
  std::optional<audit_verdict> audit;
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

/// What an interrupted run left undone, of what this process was to do:
/// each figure only for a part that ran in it.
struct left_undone {
  /// Orders of run.orders not placed (a run with an order target).
  std::optional<std::int64_t> orders_not_placed;
  /// PENDING and SENDING rows (a run with relays).
  std::optional<std::int64_t> rows_not_published;
  /// Entries queued or in processing (a run with consumers).
  std::optional<std::int64_t> entries_not_consumed;
};

/// The run's report: counts from the stores, this process's counters,
/// throughput, latency percentiles, the audit, and "ok" with "violations"
/// naming what broke. Built once (run_report_of), written as JSON only
/// where it leaves the process (run_report_json.hpp).
struct run_report {
  /// Every invariant held: no violation.
  bool ok = false;
  /// What broke, the run's own failure first.
  std::vector<std::string> violations;
  std::string role = "run";
  bool audited = true;
  int relays = 0;
  int consumers = 0;
  double seconds = 0;
  /// Store-wide, from the final state.
  std::int64_t orders = 0;
  std::int64_t outbox_rows = 0;
  std::int64_t processed_unique = 0;
  std::int64_t duplicates_absorbed = 0;
  std::int64_t order_violations = 0;
  std::int64_t dead_lettered = 0;
  std::int64_t failed_rows = 0;
  std::int64_t pending_rows = 0;
  std::int64_t sending_rows = 0;
  /// What the final state could not read ("" when it was read).
  std::string final_state_error;
  /// This process's counters (run_metrics).
  std::int64_t enqueued = 0;
  std::int64_t relay_restarts = 0;
  std::int64_t consumer_restarts = 0;
  std::int64_t injected_crashes = 0;
  std::int64_t zombie_pauses = 0;
  std::int64_t fenced_acks_rejected = 0;
  std::int64_t expired_leases_dropped = 0;
  std::int64_t fenced_moves_refused = 0;
  std::int64_t recovered_entries = 0;
  std::int64_t lease_takeovers = 0;
  std::int64_t orders_placed = 0;
  std::int64_t events_appended = 0;
  std::int64_t applied_here = 0;
  /// COMMITs whose answer the connection lost, and what became of them.
  struct lost_answers {
    std::int64_t requests = 0;
    std::int64_t found_committed = 0;
    std::int64_t found_not_committed = 0;
  } lost_commit_answers;
  /// Per second of the run, of this process's counters.
  struct rates {
    double orders_per_s = 0;
    double events_enqueued_per_s = 0;
    double events_processed_per_s = 0;
  } throughput;
  /// Commit-to-processed latency of the events this process applied, ms.
  struct percentiles {
    std::int64_t samples = 0;
    double p50 = 0;
    double p95 = 0;
    double p99 = 0;
  } latency_ms;
  /// None when the audit was not run.
  std::optional<audit_verdict> audit;
  bool interrupted = false;
  std::int64_t orders_target = 0;
  /// Rows under leases of relays that are gone ("" when none).
  std::string stranded_leases;
  /// Set exactly when the run was interrupted.
  std::optional<left_undone> undone;
};

/// The report of a run that ended with `outcome`, from its counters.
run_report run_report_of(const run_outcome& outcome,
                         const run_metrics& metrics);

/// The human summary of a report (run_report_text.cpp): this run's
/// counters apart from the store-wide totals, the audit's checks, figures
/// rounded, English plurals.
std::string run_report_text(const run_report& report);

/// For a report whose run was interrupted: what it left undone, in one
/// line for stderr ("interrupted before the run drained; left undone: 917
/// of 2000 orders not placed, ..."). Empty for a run that was not.
std::string run_report_interruption(const run_report& report);

/// The violation that says the end of the run could not read the stores.
inline constexpr const char* unread_state_violation =
    "could not read the final state: ";

/// Why a report is not ok, in one line for stderr: the final state could
/// not be read (the stores were out), or the first violation and how many
/// more there are.
std::string run_report_failure(const run_report& report);

} // namespace outbox::metrics
