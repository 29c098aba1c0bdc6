#pragma once

// What the coordinator's periodic check decides from a snapshot: the
// progress line, whether a bounded run has drained, whether it is stuck
// behind FAILED rows. Pure functions of the state, kept apart from the
// supervision code so the rules read on their own.

#include "actors/coordinator.hpp"

#include <string>

namespace outbox::actors {

/// The one-line progress summary ("orders 600 | outbox pending 0 ...").
std::string progress_line(const coordinator_state& st,
                          const pipeline_snapshot& s);

/// Whether everything this process is responsible for has drained.
bool drained(const coordinator_state& st, const pipeline_snapshot& s);

/// How long a bounded run waits without any movement before it decides
/// that FAILED rows block the rest: longer than any backoff or takeover.
storage::millis stall_timeout(const coordinator_state& st);

/// True when FAILED rows exist and nothing has moved for stall_timeout: the
/// rows behind them can never drain until an operator retries. Records the
/// counts of `s` as the last movement when they changed.
bool stalled(coordinator_state& st, const pipeline_snapshot& s,
             storage::millis now);

} // namespace outbox::actors
