#pragma once

// `outbox trim`: forgets consumers' dedup records that no delivery can need
// any more, keeping `outbox verify` true (trim_rule.hpp says which).

#include "broker/keys.hpp"

#include <cstddef>
#include <cstdint>

namespace SQLite {
class Database;
}

namespace outbox::broker {
class connection;
}

namespace outbox::audit {

/// What the whole trim did; every record looked at lands in one count.
struct trim_totals {
  std::int64_t scanned = 0;
  std::int64_t trimmed = 0;
  /// Applied at or after the cutoff.
  std::int64_t kept_young = 0;
  /// Its event still waits in a queue or processing list.
  std::int64_t kept_queued = 0;
  /// Its row is not PUBLISHED (a FAILED row may be retried and delivered
  /// again) or was published after the cutoff.
  std::int64_t kept_unpublished = 0;
  /// Not a record the inbox script wrote, no row and no sign of a purge
  /// (another database?), or changed under the trim.
  std::int64_t kept_other = 0;
  /// Script calls made; each commits on its own.
  std::int64_t batches = 0;
};

/// Trims the records of `processed` applied before `cutoff` (Redis TIME,
/// ms) whose event was delivered for good, `batch` records per HSCAN page
/// and per script call. HSCAN returns every record present for the whole
/// scan; pages stay small so Redis is never blocked for long, and each
/// page's rows are read from the outbox before its candidates are checked
/// against the lists. `totals` says what was done, also when this throws
/// (store_error, broker_error) after some script calls: a rerun goes on.
void trim_delivered(SQLite::Database& db, broker::connection& redis,
                    const broker::keys& names, std::int64_t cutoff,
                    std::size_t batch, trim_totals& totals);

} // namespace outbox::audit
