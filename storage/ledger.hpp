#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace SQLite {
class Database;
}

namespace outbox::storage {

/// One outbox row as the conservation checks see it.
struct ledger_row {
  std::string event_id;
  std::string aggregate_id;
  std::int64_t seq = 0;
  std::string event_type;
  std::string status;
  /// For OrderPlaced: the order's sku and qty from the payload; else empty/0.
  std::string sku;
  std::int64_t qty = 0;
  /// When the row was acknowledged (ms since the epoch); 0 when it was not.
  std::int64_t published_at = 0;
};

/// Every outbox row, in rowid order, read in one snapshot. For audits
/// (`outbox verify`, the end of a run), not for the hot path.
std::vector<ledger_row> read_ledger(SQLite::Database& db);

/// aggregate_id -> last seq of the aggregates `outbox purge` emptied
/// (aggregate_heads): their events' dedup records are purged history.
std::map<std::string, std::int64_t> read_aggregate_heads(SQLite::Database& db);

/// Where an event stands in the outbox, for deciding whether its dedup
/// record may be trimmed.
struct publication {
  /// The row is gone: purged (or never existed).
  bool purged = true;
  /// The row's status and published_at (0 when not PUBLISHED).
  std::string status;
  std::int64_t published_at = 0;
};

/// The publication of each event_id, in order, read in one snapshot.
std::vector<publication>
read_publications(SQLite::Database& db,
                  const std::vector<std::string>& event_ids);

} // namespace outbox::storage
