#pragma once

#include <cstdint>
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
};

/// Every outbox row, in rowid order, read in one snapshot. For audits
/// (`outbox verify`, the end of a run), not for the hot path.
std::vector<ledger_row> read_ledger(SQLite::Database& db);

} // namespace outbox::storage
