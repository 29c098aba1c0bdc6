#pragma once

#include "storage/sqlite/database.hpp"
#include "support/temp_dir.hpp"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace outbox::test {

/// A migrated database in a fresh temporary folder, with raw SQL helpers for
/// checking what the stores wrote.
class storage_fixture : public ::testing::Test {
protected:
  storage::db_options options(int busy_timeout_ms = 5000) const {
    storage::db_options result;
    result.path = path_;
    result.busy_timeout_ms = busy_timeout_ms;
    return result;
  }

  /// Runs a query returning one integer.
  std::int64_t scalar(const std::string& sql) {
    return db_->execAndGet(sql).getInt64();
  }

  /// Runs a query returning one text value.
  std::string text(const std::string& sql) {
    return db_->execAndGet(sql).getString();
  }

  /// The detail lines of EXPLAIN QUERY PLAN for `sql`.
  std::vector<std::string> query_plan(const std::string& sql) {
    SQLite::Statement plan{*db_, "EXPLAIN QUERY PLAN " + sql};
    std::vector<std::string> lines;
    while (plan.executeStep())
      lines.push_back(plan.getColumn(3).getString());
    return lines;
  }

  temp_dir dir_;
  std::string path_ = dir_.file("outbox.db");
  std::unique_ptr<SQLite::Database> db_ =
      storage::sqlite::open_and_migrate(options());
};

} // namespace outbox::test
