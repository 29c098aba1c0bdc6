#include "lab/app_reads.hpp"

#include "storage/sqlite/sqlite_error.hpp"
#include "storage/store_error.hpp"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Exception.h>
#include <SQLiteCpp/Statement.h>

namespace outbox::lab {

table_counts count_orders_and_outbox(SQLite::Database& db) {
  table_counts counts;
  try {
    SQLite::Statement rows{db, "SELECT (SELECT COUNT(*) FROM orders),"
                               " (SELECT COUNT(*) FROM outbox)"};
    rows.executeStep();
    counts.orders = rows.getColumn(0).getInt64();
    counts.outbox = rows.getColumn(1).getInt64();
  } catch (const SQLite::Exception&) {
    storage::sqlite::rethrow_as_store_error("report counts", db.getFilename());
  }
  return counts;
}

std::vector<aggregate_row>
read_aggregate_rows(SQLite::Database& db, const std::string& aggregate_id) {
  std::vector<aggregate_row> rows;
  try {
    SQLite::Statement select{db, "SELECT seq, created_at FROM outbox"
                                 " WHERE aggregate_id = ? ORDER BY seq"};
    select.bind(1, aggregate_id);
    while (select.executeStep())
      rows.push_back(
          {select.getColumn(0).getInt64(), select.getColumn(1).getInt64()});
  } catch (const SQLite::Exception&) {
    storage::sqlite::rethrow_as_store_error("aggregate rows", db.getFilename());
  }
  return rows;
}

} // namespace outbox::lab
