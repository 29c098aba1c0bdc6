#pragma once

// The progress line of `outbox run`: what an operator looks for (elapsed
// time, done/target, events/s, and why nothing moves when nothing does),
// fitted to the width of the terminal it is redrawn on. A line longer than
// the terminal wraps, and redrawing it with `\r` then leaves a copy behind
// at every refresh: so it is never longer than the width - 1.

#include "actors/ports.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

namespace outbox::actors {

/// What one refresh of the progress line shows.
struct run_progress {
  std::int64_t elapsed_ms = 0;
  /// What this process's work is counted in ("orders", "processed",
  /// "published"), how far it got and its target (0: none shown).
  std::string done_label = "orders";
  std::int64_t done = 0;
  std::int64_t target = 0;
  /// Events per second since the previous refresh, of this process's last
  /// stage (processed by its consumers, else published by its relays, else
  /// written by its writer).
  double events_per_s = 0;
  /// Counts from the stores (every process's work).
  metrics::pipeline_snapshot state;
  std::int64_t relay_restarts = 0;
  std::int64_t consumer_restarts = 0;
  /// Why nothing moves ("waiting for 256 leases of a dead relay, expire in
  /// 7 s"); empty while the run moves.
  std::string waiting;
};

/// The line for a terminal of `columns` columns: at most `columns` - 1
/// characters (a compact form, then a cut one, as the width shrinks).
/// `columns` 0: no limit (the full form, for a log file or a pipe). Text
/// from outside (a store's error) is escaped for the terminal.
std::string progress_text(const run_progress& progress, std::size_t columns);

/// Elapsed time as a person reads it: "8.2 s", "3m07s", "1h02m".
std::string elapsed_text(std::int64_t ms);

} // namespace outbox::actors
