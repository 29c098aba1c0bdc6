#include "storage/sqlite/database.hpp"
#include "storage/sqlite/order_store.hpp"
#include "storage/store_error.hpp"
#include "tests/storage/schema_fixture.hpp"
#include "tests/storage/store_error_checks.hpp"

#include <SQLiteCpp/Exception.h>
#include <sqlite3.h>

#include <chrono>
#include <map>
#include <string>
#include <thread>

// The SQLite schema as made today: its tables, indexes and constraints,
// and the connection's pragmas and lock wait.

using namespace outbox::storage;
using namespace outbox::storage::sqlite;
using outbox::test::expect_store_error;
using StorageSchema = outbox::test::schema_fixture;

namespace {

/// Column name -> default value text of `table`.
std::map<std::string, std::string> schema_columns(SQLite::Database& db,
                                                  const std::string& table) {
  SQLite::Statement info{db, "PRAGMA table_info(" + table + ")"};
  std::map<std::string, std::string> result;
  while (info.executeStep())
    result[info.getColumn(1).getString()] = info.getColumn(4).getString();
  return result;
}

} // namespace

TEST_F(StorageSchema, HasTheSeedTablesAndColumns) {
  auto orders = schema_columns(*db_, "orders");
  for (auto name : {"id", "sku", "qty"})
    EXPECT_EQ(1u, orders.count(name)) << "orders." << name;
  auto outbox = schema_columns(*db_, "outbox");
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
