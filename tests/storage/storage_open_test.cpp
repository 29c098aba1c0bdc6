#include "storage/sqlite/database.hpp"
#include "storage/sqlite/lease_store.hpp"
#include "storage/sqlite/order_store.hpp"
#include "storage/sqlite/outbox_views.hpp"
#include "storage/sqlite/retention_store.hpp"
#include "storage/sqlite/sqlite_error.hpp"
#include "storage/store_error.hpp"
#include "support/outbox_tables.hpp"
#include "support/temp_dir.hpp"
#include "tests/storage/store_error_checks.hpp"

#include <SQLiteCpp/Exception.h>

#include <fstream>
#include <string>

// Opening a SQLite file that is not an outbox database, or cannot be one,
// and how SQLite's errors become store errors.

using namespace outbox::storage;
using namespace outbox::storage::sqlite;
using outbox::test::expect_store_error;
using outbox::test::temp_dir;

TEST(StorageOpen, RequireSchemaFailsClearlyOnAFreshFile) {
  temp_dir dir;
  db_options options;
  options.path = dir.file("fresh.db");
  auto db = open_database(options);
  auto e = expect_store_error([&] { require_schema(*db); }, store_errc::schema);
  EXPECT_EQ("database " + options.path +
                " is not initialised: run `outbox init`",
            std::string{e.what()});
  // The stores check it too, instead of failing on a missing table.
  expect_store_error([&] { sqlite::order_store{*db}; }, store_errc::schema);
  expect_store_error([&] { sqlite::lease_store{*db}; }, store_errc::schema);
  expect_store_error([&] { sqlite::outbox_views{*db}; }, store_errc::schema);
  expect_store_error([&] { sqlite::retention_store{*db}; }, store_errc::schema);
  expect_store_error([&] { outbox::test::outbox_tables{*db}; },
                     store_errc::schema);
}

TEST(StorageOpen, MissingFolderIsAnIoErrorNamingThePath) {
  temp_dir dir;
  db_options options;
  options.path = dir.file("no/such/folder/app.db");
  auto e = expect_store_error([&] { open_database(options); }, store_errc::io);
  EXPECT_NE(std::string::npos, std::string{e.what()}.find(options.path));
}

TEST(StorageOpen, UnusablePathIsAnIoErrorNamingThePath) {
  temp_dir dir;
  std::ofstream{dir.file("plain-file")} << "x";
  db_options options;
  // A regular file where a folder should be (chmod would not stop root).
  options.path = dir.file("plain-file/app.db");
  auto e = expect_store_error([&] { open_database(options); }, store_errc::io);
  EXPECT_NE(std::string::npos, std::string{e.what()}.find(options.path));
  // A folder where the database file should be.
  options.path = dir.path().string();
  e = expect_store_error([&] { open_database(options); }, store_errc::io);
  EXPECT_NE(std::string::npos, std::string{e.what()}.find(options.path));
}

TEST(StorageOpen, GarbageFileIsASchemaError) {
  temp_dir dir;
  db_options options;
  options.path = dir.file("garbage.db");
  std::ofstream{options.path} << std::string(4096, 'g');
  auto e = expect_store_error([&] { open_and_migrate(options); },
                              store_errc::schema);
  EXPECT_NE(std::string::npos, std::string{e.what()}.find(options.path));
}

TEST(StorageOpen, ForeignTablesAreNotAdopted) {
  temp_dir dir;
  db_options options;
  options.path = dir.file("foreign.db");
  {
    auto db = open_database(options);
    db->exec("CREATE TABLE orders (id INTEGER PRIMARY KEY, name TEXT)");
  }
  auto e = expect_store_error([&] { open_and_migrate(options); },
                              store_errc::schema);
  EXPECT_NE(std::string::npos, std::string{e.what()}.find("orders"));
}

TEST(StorageStoreError, CodesHaveStableNames) {
  EXPECT_STREQ("busy", to_string(store_errc::busy));
  EXPECT_STREQ("io", to_string(store_errc::io));
  EXPECT_STREQ("schema", to_string(store_errc::schema));
  EXPECT_STREQ("invalid_input", to_string(store_errc::invalid_input));
  EXPECT_STREQ("internal", to_string(store_errc::internal));
}

TEST(StorageStoreError, MapsSqliteExceptionsByCode) {
  auto mapped = [](int code) {
    try {
      try {
        throw SQLite::Exception("boom", code);
      } catch (...) {
        rethrow_as_store_error("test", "/x/app.db");
      }
    } catch (const store_error& e) {
      EXPECT_NE(std::string::npos, std::string{e.what()}.find("test: "));
      return e.code();
    }
    return store_errc::internal;
  };
  EXPECT_EQ(store_errc::busy, mapped(5));           // SQLITE_BUSY
  EXPECT_EQ(store_errc::busy, mapped(6));           // SQLITE_LOCKED
  EXPECT_EQ(store_errc::io, mapped(14));            // SQLITE_CANTOPEN
  EXPECT_EQ(store_errc::io, mapped(10));            // SQLITE_IOERR
  EXPECT_EQ(store_errc::schema, mapped(26));        // SQLITE_NOTADB
  EXPECT_EQ(store_errc::invalid_input, mapped(19)); // SQLITE_CONSTRAINT
  EXPECT_EQ(store_errc::internal, mapped(1));       // SQLITE_ERROR
  // A store_error passes through unchanged.
  try {
    try {
      throw store_error(store_errc::io, "as is");
    } catch (...) {
      rethrow_as_store_error("test");
    }
  } catch (const store_error& e) {
    EXPECT_EQ(store_errc::io, e.code());
    EXPECT_STREQ("as is", e.what());
  }
}
