#pragma once

// What an operator sees and may do to the outbox (`outbox status`,
// `outbox failed`, `outbox retry`, the run's probe), whatever database
// holds it.

#include "storage/clock.hpp"
#include "storage/lease_records.hpp"
#include "storage/types.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace outbox::storage {

/// One page of FAILED rows, oldest first (see outbox_views::failed_rows).
struct failed_page {
  std::vector<failed_row> rows;
  /// The rowid of the last row: pass it to get the next page.
  std::int64_t last_rowid = 0;
};

/// Leases currently held by one owner.
struct owner_leases {
  std::string owner;
  int rows = 0;
  /// Earliest lease_until among them.
  millis earliest_expiry = 0;
  /// Latest lease_until among them.
  millis latest_expiry = 0;
  /// When the newest of their claims was made (claimed_at, stored by the
  /// claim on the clock its lease_until comes from): not inferred from
  /// lease_until, which a ttl changed since would put elsewhere. Nothing
  /// for rows leased by a binary older than schema version 10.
  std::optional<millis> last_claim;
};

/// Counts and ages for `outbox status` and the metrics.
struct outbox_stats {
  /// Rows by the text stored for their status (row_status_text): all four,
  /// zero included.
  std::map<std::string, std::int64_t> by_status;
  std::int64_t orders = 0;
  /// Age of the oldest PENDING or SENDING row (0 when none).
  millis oldest_unpublished_age = 0;
  /// SENDING rows whose lease has expired (awaiting takeover).
  std::int64_t expired_leases = 0;
  std::vector<owner_leases> leases;
  std::vector<failed_row> failed; // at most 100, oldest first

  /// Rows in `status`; 0 for one no row is in.
  std::int64_t count(row_status status) const {
    auto found = by_status.find(row_status_text(status));
    return found == by_status.end() ? 0 : found->second;
  }

  void set_count(row_status status, std::int64_t rows) {
    by_status[row_status_text(status)] = rows;
  }
};

/// Counts, FAILED rows and retries. Throws store_error.
class outbox_views {
public:
  virtual ~outbox_views() = default;

  /// FAILED -> PENDING (attempts reset, due now) for these event_ids.
  /// Returns the ids that were not FAILED rows (unknown or other status).
  virtual std::vector<std::string>
  retry(const std::vector<std::string>& event_ids, millis now) = 0;

  /// FAILED -> PENDING for every FAILED row. Returns rows retried.
  virtual int retry_all_failed(millis now) = 0;

  /// The counts and ages, FAILED rows included, as one snapshot that
  /// never takes the write lock.
  virtual outbox_stats stats(millis now) = 0;

  /// Whether any row is PENDING or SENDING: what a bounded run's drain rule
  /// asks ten times a second. Answered from the partial indexes on
  /// unpublished rows in constant time, where stats() counts every row.
  virtual bool has_pending_or_sending() = 0;

  /// A number that moves when another connection changed the database,
  /// in constant time: what a bounded run asks, ten times a second, to
  /// tell whether anything still moves, where stats() counts every row.
  /// SQLite: data_version, which stays the same between two calls on this
  /// connection exactly when no other connection committed in between.
  /// PostgreSQL: the outbox's rows inserted, updated and deleted,
  /// committed or rolled back, as the cumulative statistics count them.
  /// They arrive late (each backend flushes its counts when it goes idle,
  /// at most once a second; what came within that second waits for its
  /// next statement or, idle, up to 10 s), which only delays a stall's
  /// verdict. Nothing where no mark is kept (PostgreSQL with track_counts
  /// off) or it cannot be read, where the run counts instead.
  virtual std::optional<std::int64_t> change_mark() = 0;

  /// Up to `limit` FAILED rows with a rowid above `after_rowid`, oldest first,
  /// through the outbox_failed index: `outbox failed` pages through all of
  /// them (stats() shows only the first 100). A page shorter than `limit` is
  /// the last one.
  virtual failed_page failed_rows(std::int64_t after_rowid, int limit) = 0;
};

} // namespace outbox::storage
