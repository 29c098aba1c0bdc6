#include "storage/sqlite/database.hpp"
#include "storage/sqlite/lease_store.hpp"
#include "storage/sqlite/outbox_views.hpp"
#include "storage/sqlite/retention_store.hpp"

#include "storage/sqlite/order_store.hpp"
#include "storage/sqlite/sqlite_error.hpp"
#include "storage/store_error.hpp"
#include "support/outbox_tables.hpp"
#include "tests/storage/storage_fixture.hpp"

#include <SQLiteCpp/Exception.h>
#include <sqlite3.h>

#include <chrono>
#include <fstream>
#include <map>
#include <thread>

using namespace outbox::storage;
using namespace outbox::storage::sqlite;
using outbox::test::temp_dir;

namespace {

/// Column name -> default value text of `table`.
std::map<std::string, std::string> columns(SQLite::Database& db,
                                           const std::string& table) {
  SQLite::Statement info{db, "PRAGMA table_info(" + table + ")"};
  std::map<std::string, std::string> result;
  while (info.executeStep())
    result[info.getColumn(1).getString()] = info.getColumn(4).getString();
  return result;
}

/// Runs `call` and returns the store_error it throws (fails if none).
template <class Call>
store_error expect_store_error(Call&& call, store_errc code) {
  try {
    call();
  } catch (const store_error& e) {
    EXPECT_EQ(code, e.code()) << e.what();
    return e;
  }
  ADD_FAILURE() << "expected store_error(" << to_string(code) << ")";
  return store_error(store_errc::internal, "none thrown");
}

class StorageSchema : public outbox::test::storage_fixture {
protected:
  /// Inserts an outbox row by hand; `extra` columns/values are appended.
  void insert_outbox(const std::string& extra_columns = "",
                     const std::string& extra_values = "",
                     const std::string& payload = "'{}'") {
    auto row = std::to_string(++rows_);
    db_->exec("INSERT INTO outbox (event_id, aggregate_id, seq, event_type,"
              " payload, created_at" +
              extra_columns + ") VALUES ('e-" + row + "', 'a', " + row +
              ", 'T', " + payload + ", 0" + extra_values + ")");
  }

  int rows_ = 0;
};

} // namespace

TEST_F(StorageSchema, HasTheSeedTablesAndColumns) {
  auto orders = columns(*db_, "orders");
  for (auto name : {"id", "sku", "qty"})
    EXPECT_EQ(1u, orders.count(name)) << "orders." << name;
  auto outbox = columns(*db_, "outbox");
  for (auto name : {"event_id", "aggregate_id", "seq", "event_type", "payload",
                    "status", "owner", "lease_until", "lease_epoch", "attempts",
                    "available_at", "last_error", "created_at", "published_at"})
    EXPECT_EQ(1u, outbox.count(name)) << "outbox." << name;
  EXPECT_EQ("'PENDING'", outbox["status"]);
  EXPECT_TRUE(db_->tableExists("request_keys"));
  EXPECT_EQ(schema_version, scalar("PRAGMA user_version"));
}

TEST_F(StorageSchema, StatusDefaultsToPending) {
  insert_outbox();
  EXPECT_EQ("PENDING", text("SELECT status FROM outbox"));
  EXPECT_EQ(0, scalar("SELECT attempts + lease_epoch + lease_until"
                      " + available_at FROM outbox"));
}

TEST_F(StorageSchema, HasThePartialIndexes) {
  for (auto index : {"outbox_pending", "outbox_leased", "outbox_unpublished",
                     "outbox_failed"})
    EXPECT_EQ(1, scalar(std::string{"SELECT COUNT(*) FROM sqlite_master"
                                    " WHERE type = 'index' AND name = '"} +
                        index + "'"))
        << index;
  EXPECT_NE(std::string::npos, text("SELECT sql FROM sqlite_master"
                                    " WHERE name = 'outbox_pending'")
                                   .find("WHERE status = 'PENDING'"));
  EXPECT_NE(std::string::npos, text("SELECT sql FROM sqlite_master"
                                    " WHERE name = 'outbox_unpublished'")
                                   .find("WHERE published_at IS NULL"));
}

TEST_F(StorageSchema, MigratesVersion1ToThePublishedAtIndex) {
  sqlite::order_store orders{*db_};
  orders.append_event({"a", "T", "{}"}, 1);
  // What version 1 left behind.
  db_->exec("DROP INDEX outbox_unpublished;"
            " CREATE INDEX outbox_unpublished ON outbox(aggregate_id, seq)"
            " WHERE status <> 'PUBLISHED'; PRAGMA user_version = 1");
  expect_store_error([&] { require_schema(*db_); }, store_errc::schema);
  migrate(*db_);
  EXPECT_EQ(schema_version, scalar("PRAGMA user_version"));
  EXPECT_NE(std::string::npos, text("SELECT sql FROM sqlite_master"
                                    " WHERE name = 'outbox_unpublished'")
                                   .find("WHERE published_at IS NULL"));
  EXPECT_EQ(1, scalar("SELECT COUNT(*) FROM outbox"));
}

/// How many ephemeral tables SQLite's program for `sql` opens.
static int ephemeral_tables(SQLite::Database& db, const std::string& sql) {
  SQLite::Statement plan{db, "EXPLAIN " + sql};
  int count = 0;
  while (plan.executeStep())
    count += plan.getColumn(1).getString() == "OpenEphemeral";
  return count;
}

// Version 6: the status CHECK as comparisons, not an IN list, for which
// SQLite built an ephemeral table on every insert and every status change.
TEST_F(StorageSchema, MigratesVersion5ToAStatusCheckWithoutAnEphemeralTable) {
  sqlite::order_store orders{*db_};
  orders.place_order({std::nullopt, "sku-1", 2}, 1);
  const std::string insert =
      "INSERT INTO outbox (event_id, aggregate_id, seq, event_type, payload,"
      " created_at) VALUES ('e', 'a', 1, 'T', '{}', 0)";
  const std::string ack = "UPDATE outbox SET status = 'PUBLISHED', owner ="
                          " NULL, published_at = 1 WHERE event_id = 'e'";
  EXPECT_EQ(0, ephemeral_tables(*db_, insert));
  EXPECT_EQ(0, ephemeral_tables(*db_, ack));
  // What version 5 had, written back as version 6 rewrites it.
  db_->exec(R"sql(
PRAGMA writable_schema = ON;
UPDATE sqlite_master SET sql = replace(sql,
  'status = ''PENDING'' OR status = ''SENDING'' OR status = ''PUBLISHED'''
  || ' OR status = ''FAILED''',
  'status IN (''PENDING'', ''SENDING'', ''PUBLISHED'', ''FAILED'')')
  WHERE name = 'outbox';
PRAGMA writable_schema = OFF;
PRAGMA user_version = 5;
)sql");
  // A fresh connection reads the schema as a version 5 database has it.
  {
    auto old = open_database(options());
    EXPECT_GT(ephemeral_tables(*old, ack), 0) << "the IN list's cost";
    expect_store_error([&] { require_schema(*old); }, store_errc::schema);
    migrate(*old);
  }
  EXPECT_EQ(schema_version, scalar("PRAGMA user_version"));
  EXPECT_EQ(0, ephemeral_tables(*db_, insert)) << "this connection too";
  EXPECT_EQ(0, ephemeral_tables(*db_, ack));
  EXPECT_EQ("ok", text("PRAGMA integrity_check"));
  EXPECT_EQ(1, scalar("SELECT COUNT(*) FROM outbox"));
  EXPECT_THROW(insert_outbox(", status", ", 'DONE'"), SQLite::Exception)
      << "the same rule";
  insert_outbox(", status, published_at", ", 'PUBLISHED', 5");
}

// Version 8: events' headers, a column every row of an older version gets
// as NULL; the CHECK keeps it a JSON object.
TEST_F(StorageSchema, MigratesVersion7AddingHeaders) {
  sqlite::order_store orders{*db_};
  orders.place_order({std::nullopt, "sku-1", 2}, 1);
  db_->exec("UPDATE outbox SET headers = NULL");
  db_->exec("DROP TRIGGER outbox_headers_shape;"
            "DROP TRIGGER outbox_headers_shape_update;"
            "ALTER TABLE outbox DROP COLUMN headers; PRAGMA user_version = 7");
  {
    auto old = open_database(options());
    expect_store_error([&] { require_schema(*old); }, store_errc::schema);
    migrate(*old);
  }
  EXPECT_EQ(schema_version, scalar("PRAGMA user_version"));
  EXPECT_EQ(1, scalar("SELECT COUNT(*) FROM outbox WHERE headers IS NULL"));
  EXPECT_THROW(insert_outbox(", headers", ", '[1]'"), SQLite::Exception);
  EXPECT_THROW(insert_outbox(", headers", ", 'not json'"), SQLite::Exception);
  // Values that are not strings would fail the relays' entry: refused.
  EXPECT_THROW(insert_outbox(", headers", ", '{\"n\":1}'"), SQLite::Exception);
  insert_outbox(", headers", ", '{\"tenant\":\"acme\"}'");
  EXPECT_THROW(db_->exec("UPDATE outbox SET headers = '{\"a\":[]}'"),
               SQLite::Exception);
  // Moved back to 7 by hand with the column there: migrating skips it.
  db_->exec("PRAGMA user_version = 7");
  {
    auto again = open_database(options());
    migrate(*again);
  }
  EXPECT_EQ(schema_version, scalar("PRAGMA user_version"));
  EXPECT_EQ("ok", text("PRAGMA integrity_check"));
}

TEST_F(StorageSchema, CheckConstraintsRejectBadRows) {
  auto rejects = [this](const std::string& sql) {
    EXPECT_THROW(db_->exec(sql), SQLite::Exception) << sql;
  };
  rejects("INSERT INTO orders (sku, qty, created_at) VALUES ('', 1, 0)");
  rejects("INSERT INTO orders (sku, qty, created_at) VALUES ('" +
          std::string(65, 'x') + "', 1, 0)");
  rejects("INSERT INTO orders (sku, qty, created_at) VALUES ('a', 0, 0)");
  rejects("INSERT INTO orders (sku, qty, created_at) VALUES ('a', 1000001, 0)");
  rejects("INSERT INTO orders (sku, qty) VALUES ('a', 1)");
  EXPECT_THROW(insert_outbox("", "", "'not json'"), SQLite::Exception);
  EXPECT_THROW(insert_outbox("", "", "'[1, 2]'"), SQLite::Exception);
  EXPECT_THROW(insert_outbox(", status", ", 'DONE'"), SQLite::Exception);
  EXPECT_THROW(insert_outbox(", status", ", 'SENDING'"), SQLite::Exception)
      << "SENDING without an owner";
  EXPECT_THROW(insert_outbox(", owner", ", 'relay-1'"), SQLite::Exception)
      << "an owner on a PENDING row";
  EXPECT_THROW(insert_outbox(", status", ", 'PUBLISHED'"), SQLite::Exception)
      << "PUBLISHED without published_at";
  EXPECT_THROW(insert_outbox(", attempts", ", -1"), SQLite::Exception);
  rejects("INSERT INTO outbox (event_id, aggregate_id, seq, event_type,"
          " payload, created_at) VALUES ('x', 'a', 0, 'T', '{}', 0)");
  rejects("INSERT INTO outbox (event_id, aggregate_id, seq, event_type,"
          " payload, created_at) VALUES ('x', '', 1, 'T', '{}', 0)");
  rejects("INSERT INTO outbox (event_id, aggregate_id, seq, event_type,"
          " payload, created_at) VALUES ('x', 'a', 1, '', '{}', 0)");
  insert_outbox(", status, owner", ", 'SENDING', 'relay-1'");
  insert_outbox(", status, published_at", ", 'PUBLISHED', 5");
  auto values = [](const std::string& event_id) {
    return "INSERT INTO outbox (event_id, aggregate_id, seq, event_type,"
           " payload, created_at) VALUES ('" +
           event_id + "', 'u', 1, 'T', '{}', 0)";
  };
  db_->exec(values("u-1"));
  rejects(values("u-2")); // UNIQUE(aggregate_id, seq)
  // Foreign keys are on: a request key must name a real order and event.
  auto key = [](const std::string& request_id, int order_id,
                const std::string& event_id) {
    return "INSERT INTO request_keys (request_id, fingerprint, order_id,"
           " event_id, created_at) VALUES ('" +
           request_id + "', 'f', " + std::to_string(order_id) + ", '" +
           event_id + "', 0)";
  };
  rejects(key("r", 42, "u-1"));
  db_->exec("INSERT INTO orders (sku, qty, created_at) VALUES ('a', 1, 0)");
  rejects(key("r", 1, "no-such-event"));
  rejects(key("", 1, "u-1"));
  rejects(key(std::string(129, 'r'), 1, "u-1"));
  db_->exec(key("r", 1, "u-1"));
  EXPECT_EQ(3, scalar("SELECT COUNT(*) FROM outbox"));
}

TEST_F(StorageSchema, MigrateIsIdempotent) {
  sqlite::order_store orders{*db_};
  orders.place_order({std::nullopt, "sku-1", 2}, 1);
  migrate(*db_);
  migrate(*db_);
  auto again = open_and_migrate(options());
  require_schema(*again);
  EXPECT_EQ(1, again->execAndGet("SELECT COUNT(*) FROM orders").getInt());
  EXPECT_EQ(schema_version, again->execAndGet("PRAGMA user_version").getInt());
}

TEST_F(StorageSchema, AppliesTheConnectionPragmas) {
  auto options = this->options();
  options.synchronous = "normal";
  auto db = open_database(options);
  EXPECT_EQ("wal", db->execAndGet("PRAGMA journal_mode").getString());
  EXPECT_EQ(1, db->execAndGet("PRAGMA foreign_keys").getInt());
  EXPECT_EQ(1, db->execAndGet("PRAGMA synchronous").getInt()); // NORMAL
  EXPECT_EQ(2, scalar("PRAGMA synchronous")); // FULL, the default
  // Speed only: a bigger page cache, rarer checkpoints, in-memory sorts.
  EXPECT_EQ(-65536, db->execAndGet("PRAGMA cache_size").getInt());
  EXPECT_EQ(10000, db->execAndGet("PRAGMA wal_autocheckpoint").getInt());
  EXPECT_EQ(67108864, db->execAndGet("PRAGMA journal_size_limit").getInt64());
  EXPECT_EQ(2, db->execAndGet("PRAGMA temp_store").getInt()); // MEMORY
}

TEST_F(StorageSchema, AHeldWriteLockIsWaitedForUpToBusyTimeout) {
  auto options = this->options();
  options.busy_timeout_ms = 300;
  auto holder = open_database(options);
  auto waiter = open_database(options);
  holder->exec("BEGIN IMMEDIATE");
  auto start = std::chrono::steady_clock::now();
  try {
    waiter->exec("BEGIN IMMEDIATE");
    ADD_FAILURE() << "the lock was not held";
  } catch (const SQLite::Exception& e) {
    EXPECT_EQ(SQLITE_BUSY, e.getErrorCode() & 0xff) << e.what();
  }
  auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_GE(waited, std::chrono::milliseconds(290));
  EXPECT_LT(waited, std::chrono::seconds(5));

  // Released while we wait: taken over at once, not after a long sleep.
  std::thread release{[&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    holder->exec("COMMIT");
  }};
  start = std::chrono::steady_clock::now();
  waiter->exec("BEGIN IMMEDIATE");
  waited = std::chrono::steady_clock::now() - start;
  release.join();
  waiter->exec("COMMIT");
  EXPECT_LT(waited, std::chrono::milliseconds(290));
}

TEST_F(StorageSchema, RejectsAnUnknownSynchronousMode) {
  auto options = this->options();
  options.synchronous = "SOMETIMES";
  auto e = expect_store_error([&] { open_database(options); },
                              store_errc::invalid_input);
  EXPECT_NE(std::string::npos, std::string{e.what()}.find("synchronous"));
  EXPECT_NE(std::string::npos, std::string{e.what()}.find("SOMETIMES"));
}

TEST_F(StorageSchema, RejectsADatabaseNewerThanTheBinary) {
  db_->exec("PRAGMA user_version = " + std::to_string(schema_version + 1));
  auto e = expect_store_error([&] { migrate(*db_); }, store_errc::schema);
  EXPECT_NE(std::string::npos, std::string{e.what()}.find("newer"));
  expect_store_error([&] { require_schema(*db_); }, store_errc::schema);
  expect_store_error([&] { open_and_migrate(options()); }, store_errc::schema);
}

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
