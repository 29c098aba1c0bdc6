#pragma once

// The reads of app.db that the lab's steps make besides the operator views:
// the report's row counts and the order check's rows of one aggregate.
// Like the ledger's reads, free functions on a connection the caller owns:
// the lab always runs on its own SQLite file (seed 000's app.db).

#include "storage/clock.hpp"
#include "storage/sqlite_fwd.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace outbox::lab {

/// COUNT(*) of the orders and outbox tables.
struct table_counts {
  std::int64_t orders = 0;
  std::int64_t outbox = 0;
};

/// One outbox row of an aggregate, as the order check shows it.
struct aggregate_row {
  std::int64_t seq = 0;
  storage::millis created_at = 0;
};

/// Both counts in one statement, so they come from one snapshot. Throws
/// store_error ("report counts").
table_counts count_orders_and_outbox(SQLite::Database& db);

/// The aggregate's outbox rows, by seq. Throws store_error ("aggregate
/// rows").
std::vector<aggregate_row> read_aggregate_rows(SQLite::Database& db,
                                               const std::string& aggregate_id);

} // namespace outbox::lab
