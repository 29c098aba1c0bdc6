#pragma once

// What the coordinator's periodic check decides from a snapshot: the
// progress line, whether a bounded run has drained, whether it is stuck
// and why. Pure functions of the state, kept apart from the supervision
// code so the rules read on their own.

#include "actors/coordinator_core.hpp"
#include "actors/progress_line.hpp"

#include <string>

namespace outbox::actors {

/// `now`, with the figures of a store that did not answer (see
/// pipeline_snapshot's database_answered and redis_answered) taken from
/// `before`: an outage shows the last counts known, not zeros.
metrics::pipeline_snapshot
with_last_known(metrics::pipeline_snapshot now,
                const metrics::pipeline_snapshot& before);

/// The last full counts `known`, with what a light read (drain_snapshot)
/// has newer: Redis's figures (when it answered), the database's change
/// mark, and the trouble, if any. What the progress line shows between two
/// full counts.
metrics::pipeline_snapshot
with_light_read(metrics::pipeline_snapshot known,
                const metrics::pipeline_snapshot& light);

/// Keeps st.last_known as the last full count (between_counts starts from
/// it), with this process's rows written and acked at that time.
void remember_count(coordinator_core& st);

/// What the progress line shows between two full counts: the last count
/// with the light read's newer figures (with_light_read), its PENDING and
/// PUBLISHED moved by the rows this process wrote and acked since.
metrics::pipeline_snapshot
between_counts(const coordinator_core& st,
               const metrics::pipeline_snapshot& light);

/// How many times what the last full count took must pass before the
/// progress line counts in full again (1 s at least): the counting keeps
/// to a twentieth of the time, however large the outbox.
inline constexpr storage::millis full_count_spacing = 20;

/// Whether the run has met Redis refusing its commands within the stall
/// timeout (metrics::refusal_log): its change mark then says nothing.
bool refusal_met(const coordinator_core& st, storage::millis now);

/// Records the counts of `s` as the last movement when they changed (or an
/// outage was retried since). Called at every check, before the others.
void note_movement(coordinator_core& st, const metrics::pipeline_snapshot& s,
                   storage::millis now);

/// What the progress line shows now; advances the events/s window.
run_progress progress_of(coordinator_core& st,
                         const metrics::pipeline_snapshot& s,
                         storage::millis now);

/// Why nothing has moved for a while ("waiting for 256 leases of a dead
/// relay, expire in 7 s", "1200 PENDING rows but no relay in this
/// process"); empty while the run moves.
std::string waiting_reason(const coordinator_core& st,
                           const metrics::pipeline_snapshot& s,
                           storage::millis now);

/// At the end of a run: the SENDING rows of `s` leased by this process's
/// relays (all gone by then) or under expired leases, and when the first
/// lease expires: "256 rows stay SENDING under the lease of a dead relay
/// (relay-h-1-0): they wait for it to expire (in 7 s), then a relay takes
/// them over". Empty when there are none.
std::string stranded_leases(const coordinator_core& st,
                            const metrics::pipeline_snapshot& s,
                            storage::millis now);

/// Whether everything this process is responsible for has drained.
bool drained(const coordinator_core& st, const metrics::pipeline_snapshot& s);

/// How long a bounded run waits without any movement before it decides
/// that it is stuck: longer than any backoff or takeover.
storage::millis stall_timeout(const coordinator_core& st);

/// Whether a bounded run's check counts the stores in full for its stall
/// rule: at every check once nothing has moved for the stall timeout, so a
/// stalled run ends when it would with every check counting, naming what
/// it waits for; and once a second when the light read has no change mark
/// to go by (`marked` false: PostgreSQL with track_counts off, or a
/// refusal churning the mark), whose counts then say whether anything
/// moved. Never for an unbounded run.
bool full_read_due(const coordinator_core& st, storage::millis now,
                   bool marked);

/// What keeps a bounded run from draining when nothing has moved for
/// stall_timeout (see note_movement): FAILED rows that block their
/// aggregates until an operator retries, entries the consumers cannot get
/// through, or rows nobody publishes. Empty while the run moves, drains or
/// waits out an outage.
std::string stall_reason(const coordinator_core& st,
                         const metrics::pipeline_snapshot& s,
                         storage::millis now);

} // namespace outbox::actors
