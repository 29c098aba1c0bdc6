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
};

} // namespace outbox::cli
