#pragma once

// `outbox trim` in a consumer's own database (consumer.sink): its inbox
// rows go under the rule Redis's dedup records go by (trim_rule.hpp), only
// once Redis's record of the event is gone and Redis's seq rule absorbs a
// redelivery without it (broker/lua/inbox_options.lua), so a row never goes
// before what would answer for it.

#include "broker/broker_fwd.hpp"
#include "broker/keys.hpp"

#include <cstddef>
#include <cstdint>

namespace outbox::sink {
class sink;
}

namespace outbox::storage {
class database;
}

namespace outbox::audit {

/// What a trim of the sink's inbox rows did; every row looked at lands in
/// one count.
struct sink_trim_totals {
  /// Rows applied before the cutoff, looked at.
  std::int64_t scanned = 0;
  std::int64_t trimmed = 0;
  /// Redis still has the event's record (its own trim keeps it).
  std::int64_t kept_recorded = 0;
  /// Redis's seq rule would not absorb a redelivery: its aggregate's
  /// applied seq is below it, or a gap mark names it (a dead letter, a
  /// jump, an overflow), or Redis lost its state.
  std::int64_t kept_uncovered = 0;
  /// Its event still waits in a queue or processing list.
  std::int64_t kept_queued = 0;
  /// Its outbox row is not PUBLISHED, or was published after the cutoff.
  std::int64_t kept_unpublished = 0;
  /// No outbox row and no sign of a purge.
  std::int64_t kept_other = 0;
  /// Pages deleted; each commits on its own.
  std::int64_t batches = 0;
};

/// Deletes the inbox rows of `sink` applied before `cutoff` (ms) whose
/// event was delivered for good (its outbox row purged or PUBLISHED before
/// the cutoff), has no record in Redis's `processed` but is covered by its
/// aggregate's applied seq without a gap mark, and waits in no queue or
/// processing list, `batch` rows a page. Counts in `totals` as it goes;
/// throws what the stores throw.
void trim_sink_rows(storage::database& db, broker::connection& redis,
                    const broker::keys& names, sink::sink& sink,
                    std::int64_t cutoff, std::size_t batch,
                    sink_trim_totals& totals);

} // namespace outbox::audit
