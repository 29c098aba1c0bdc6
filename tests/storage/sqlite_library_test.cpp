#include "storage/db_options.hpp"
#include "storage/sqlite/database.hpp"
#include "support/temp_dir.hpp"

#include <SQLiteCpp/Database.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

// SQLite counts no allocations (SQLITE_CONFIG_MEMSTATUS off, set before the
// first connection): counting takes a global mutex around every one.
TEST(StorageSqliteLibrary, KeepsNoMemoryStatistics) {
  outbox::test::temp_dir dir{"outbox-sqlite-library"};
  outbox::storage::db_options options;
  options.path = dir.file("outbox.db");
  auto db = outbox::storage::sqlite::open_database(options);
  db->exec("CREATE TABLE t (x TEXT)");
  db->exec("INSERT INTO t VALUES (printf('%.*c', 100000, 'x'))");
  EXPECT_EQ(sqlite3_memory_used(), 0);
  EXPECT_EQ(sqlite3_memory_highwater(0), 0);
}
