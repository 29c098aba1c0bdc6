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
/// that it is stuck: longer than any backoff or takeover.
storage::millis stall_timeout(const coordinator_state& st);

/// What keeps a bounded run from draining when nothing has moved for
/// stall_timeout (no count changed, no outage retried): FAILED rows that
/// block their aggregates until an operator retries, entries the
/// consumers cannot get through, or rows nobody publishes. Empty while
/// the run moves, drains or waits out an outage. Records the counts of `s`
/// as the last movement when they changed.
std::string stall_reason(coordinator_state& st, const pipeline_snapshot& s,
                         storage::millis now);

} // namespace outbox::actors
