#pragma once

namespace outbox::cli {

/// The documented exit codes (DESIGN.md, README "Exit codes").
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
  /// A bounded `outbox run` stopped by SIGINT (128 + 2) before it drained,
  /// every invariant holding: it says what it left undone.
  exit_interrupted = 130,
  /// The same, stopped by SIGTERM (128 + 15).
  exit_terminated = 143,
};

} // namespace outbox::cli
