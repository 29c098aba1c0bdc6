#pragma once

// The reads of app.db that the lab's steps make besides the operator views:
// the report's row counts and the order check's rows of one aggregate.
// Like the ledger's reads, free functions on a connection the caller owns.

#include "storage/lab_rows.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace SQLite {
class Database;
}

namespace outbox::storage::sqlite {

/// Both counts in one statement, so they come from one snapshot. Throws
/// store_error ("report counts").
table_counts count_orders_and_outbox(SQLite::Database& db);

/// The aggregate's outbox rows, by seq. Throws store_error ("aggregate
/// rows").
std::vector<aggregate_row> read_aggregate_rows(SQLite::Database& db,
                                               const std::string& aggregate_id);

} // namespace outbox::storage::sqlite
