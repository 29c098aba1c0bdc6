#pragma once

// `outbox purge` as a whole: batch after batch of
// retention_store::purge_published until the walk is done, whatever
// database holds the rows. One short transaction per batch, so writers and
// relays get the lock between batches; a batch that fails leaves the
// earlier ones committed.

#include "storage/clock.hpp"
#include "storage/store_error.hpp"

#include <cstdint>
#include <optional>

namespace outbox::storage {

class retention_store;

/// What a purge committed: the sums over its committed batches.
struct purge_totals {
  std::int64_t deleted = 0;
  std::int64_t request_keys = 0;
  std::int64_t aggregate_heads = 0;
  std::int64_t batches = 0;
  /// Set when a batch failed after earlier ones had committed: the purge
  /// stopped part way, the totals say what stays done, and a rerun
  /// finishes it.
  std::optional<store_error> stopped_by;
};

/// Deletes the PUBLISHED rows published before `cutoff`, `batch_limit` rows
/// per transaction, until none is left. A failure of the first batch
/// (nothing committed) throws its store_error; a later one is returned in
/// stopped_by.
purge_totals purge_published_before(retention_store& store, millis cutoff,
                                    int batch_limit);

} // namespace outbox::storage
