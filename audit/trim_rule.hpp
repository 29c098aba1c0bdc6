#pragma once

// Which dedup records `outbox trim` may forget. The rule is the converse of
// the one `outbox verify` excuses a missing record by (conservation.hpp:
// published_processed): a record may go only when its event can no longer
// come out of the outbox, its row purged or PUBLISHED before the cutoff,
// and verify accepts a missing record exactly for a row published before
// the latest cutoff (both compare published_at < cutoff; they must agree).

#include "storage/ledger.hpp"

#include <cstdint>
#include <vector>

namespace outbox::storage {
class database;
} // namespace outbox::storage

namespace outbox::audit {

/// Where an applied event stands for a trim at some cutoff.
enum class trim_verdict {
  /// Delivered for good: its row was purged, or was PUBLISHED before the
  /// cutoff. No relay publishes it again, so its record may go (unless a
  /// copy still waits in a queue or processing list).
  delivered,
  /// Its row is there but not PUBLISHED (a FAILED row may be retried and
  /// delivered again), or was published at or after the cutoff.
  unpublished,
  /// No row, and nothing says a purge removed it (another database?).
  unknown,
};

/// The verdict on one event's publication for a trim at `cutoff` (ms,
/// the clock published_at was written by).
trim_verdict judge_for_trim(const storage::publication& row,
                            std::int64_t cutoff);

/// Of `events`, read from `db` in one go, those delivered for good at
/// `cutoff`, in order; each other one counted into `unpublished` or
/// `unknown` by its verdict.
std::vector<storage::applied_event> delivered_for_trim(
    storage::database& db, std::vector<storage::applied_event> events,
    std::int64_t cutoff, std::int64_t& unpublished, std::int64_t& unknown);

} // namespace outbox::audit
