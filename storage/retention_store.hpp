#pragma once

// The retention side of the outbox (`outbox purge`), whatever database
// holds it.

#include "storage/clock.hpp"

#include <cstdint>

namespace outbox::storage {

/// What one purge batch did, and where the next one starts.
struct purge_batch {
  /// PUBLISHED rows deleted (at most the batch limit).
  int deleted = 0;
  /// request_keys rows deleted with them.
  int request_keys = 0;
  /// Deleted rows that were the newest of their aggregate: their seq was
  /// saved in aggregate_heads, where seq allocation continues from it (it
  /// must not restart at 1, or the consumers would see the aggregate's next
  /// event out of order).
  int aggregate_heads = 0;
  /// The next batch starts after this rowid.
  std::int64_t last_rowid = 0;
  /// The walk reached the end of the table, or the first row created at or
  /// after the cutoff (published after it too): nothing is left to purge.
  bool done = false;
};

/// Deletes what was published long enough ago. Throws store_error.
class retention_store {
public:
  virtual ~retention_store() = default;

  /// Deletes up to `limit` PUBLISHED rows published before `cutoff`, in rowid
  /// order after `after_rowid`, with their request_keys rows, in one short
  /// write transaction that looks at no more than
  /// purge_scan_bound(limit) rows. PENDING, SENDING and FAILED rows and the
  /// orders are never deleted; an aggregate's newest row leaves its seq in
  /// aggregate_heads. Call again from last_rowid until done.
  virtual purge_batch purge_published(millis cutoff, std::int64_t after_rowid,
                                      int limit) = 0;
};

} // namespace outbox::storage
