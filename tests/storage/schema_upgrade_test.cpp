#include "storage/sqlite/database.hpp"
#include "storage/sqlite/order_store.hpp"
#include "storage/store_error.hpp"
#include "tests/storage/schema_fixture.hpp"
#include "tests/storage/store_error_checks.hpp"

#include <SQLiteCpp/Exception.h>

#include <string>

// Upgrading an older SQLite schema to today's, version by version.

using namespace outbox::storage;
using namespace outbox::storage::sqlite;
using outbox::test::expect_store_error;
using StorageSchema = outbox::test::schema_fixture;

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
