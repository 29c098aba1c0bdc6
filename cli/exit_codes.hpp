#pragma once

namespace outbox::cli {

/// The documented exit codes (docs/commands.md, "Exit codes").
enum exit_code : int {
  /// Success; for verify and run: every invariant holds.
  exit_ok = 0,
  /// Runtime failure (database locked or unwritable, Redis unreachable) or a
  /// violated invariant.
  exit_failure = 1,
  /// Usage, configuration or input error: nothing was done.
  exit_usage = 2,
  /// Idempotency conflict: the request_id belongs to another order.
  exit_conflict = 3,
  /// Partly done: a command that works in steps (retry of named ids, purge,
  /// trim, dead-letters replay --all) committed some of them and not the
  /// rest (refused, unreplayable, or stopped by a failure); stderr names
  /// what was left. 1 and 2 keep meaning that nothing was changed by the
  /// step that failed, so a script can tell "rerun" from "nothing to undo".
  exit_partial = 4,
  /// Outcome unknown: a write's COMMIT was sent and its answer lost with
  /// the connection, and whether it committed could not be found out
  /// (storage::store_errc::outcome_unknown). Running the same command with
  /// the same request id again is safe and tells which.
  exit_outcome_unknown = 5,
  /// `outbox bench` could not run outbox-bench, looked for next to the
  /// running outbox (127: what a shell answers for a command it cannot
  /// find).
  exit_no_bench_program = 127,
  /// A bounded `outbox run` stopped by SIGINT (128 + 2) before it drained,
  /// every invariant holding: it says what it left undone.
  exit_interrupted = 130,
  /// The same, stopped by SIGTERM (128 + 15).
  exit_terminated = 143,
};

} // namespace outbox::cli
