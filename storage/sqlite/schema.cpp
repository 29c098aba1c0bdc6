// The SQLite schema (docs/data-model.md) and its migrations: each
// version's DDL, the upgrade from any older version, and the check that a
// database is this binary's.

#include "storage/sqlite/database.hpp"

#include "storage/sqlite/sqlite_error.hpp"
#include "storage/sqlite/sqlite_support.hpp"
#include "storage/sqlite/transaction.hpp"
#include "storage/store_error.hpp"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Exception.h>

#include <iterator>
#include <string>

namespace outbox::storage::sqlite {

namespace {

/// Version 0 -> 1: the tables and indexes of docs/data-model.md.
constexpr const char* schema_v1 = R"sql(
CREATE TABLE orders (
  id INTEGER PRIMARY KEY,
  sku TEXT NOT NULL CHECK (length(sku) BETWEEN 1 AND 64),
  qty INTEGER NOT NULL CHECK (qty BETWEEN 1 AND 1000000),
  created_at INTEGER NOT NULL
);

CREATE TABLE outbox (
  event_id TEXT PRIMARY KEY NOT NULL CHECK (length(event_id) > 0),
  aggregate_id TEXT NOT NULL CHECK (length(aggregate_id) > 0),
  seq INTEGER NOT NULL CHECK (seq >= 1),
  event_type TEXT NOT NULL CHECK (length(event_type) > 0),
  payload TEXT NOT NULL
    CHECK (json_valid(payload) AND json_type(payload) = 'object'),
  status TEXT NOT NULL DEFAULT 'PENDING'
    CHECK (status IN ('PENDING', 'SENDING', 'PUBLISHED', 'FAILED')),
  owner TEXT,
  lease_until INTEGER NOT NULL DEFAULT 0,
  lease_epoch INTEGER NOT NULL DEFAULT 0 CHECK (lease_epoch >= 0),
  attempts INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  available_at INTEGER NOT NULL DEFAULT 0,
  last_error TEXT,
  created_at INTEGER NOT NULL,
  published_at INTEGER,
  UNIQUE (aggregate_id, seq),
  -- Only a leased row has an owner, and a leased row always has one.
  CHECK (CASE WHEN status = 'SENDING'
              THEN owner IS NOT NULL AND length(owner) > 0
              ELSE owner IS NULL END),
  CHECK ((status = 'PUBLISHED') = (published_at IS NOT NULL))
);

-- Seed 000's partial index. Entries of one key are kept in rowid order, so
-- "WHERE status='PENDING' ORDER BY rowid" walks it in insertion order.
CREATE INDEX outbox_pending ON outbox(status) WHERE status = 'PENDING';
-- Expired leases: a range on lease_until over the few leased rows.
CREATE INDEX outbox_leased ON outbox(lease_until) WHERE status = 'SENDING';
-- Head-of-line lookup: the lowest unpublished seq of an aggregate.
CREATE INDEX outbox_unpublished ON outbox(aggregate_id, seq)
  WHERE status <> 'PUBLISHED';
CREATE INDEX outbox_failed ON outbox(status) WHERE status = 'FAILED';

CREATE TABLE request_keys (
  request_id TEXT PRIMARY KEY NOT NULL
    CHECK (length(request_id) BETWEEN 1 AND 128),
  fingerprint TEXT NOT NULL CHECK (length(fingerprint) > 0),
  order_id INTEGER NOT NULL REFERENCES orders(id),
  event_id TEXT NOT NULL REFERENCES outbox(event_id),
  created_at INTEGER NOT NULL
);
)sql";

/// Version 1 -> 2: the head-of-line index keyed on published_at, which is
/// NULL exactly when status is not PUBLISHED (a CHECK says so). A claim,
/// release or backoff changes status but not published_at, so SQLite no
/// longer rewrites this index for them; only the ack removes the entry.
constexpr const char* schema_v2 = R"sql(
DROP INDEX outbox_unpublished;
CREATE INDEX outbox_unpublished ON outbox(aggregate_id, seq)
  WHERE published_at IS NULL;
)sql";

/// Version 2 -> 3: request_keys by event_id. With foreign keys on, deleting
/// an outbox row (`outbox purge`) looks up its request_keys children; without
/// this index every deleted row scans the whole request_keys table under the
/// write lock. IF NOT EXISTS: a database moved back to an older user_version
/// by hand keeps the index it has.
constexpr const char* schema_v3 = R"sql(
CREATE INDEX IF NOT EXISTS request_keys_event ON request_keys(event_id);
)sql";

/// Version 3 -> 4: the last seq of aggregates whose rows `outbox purge`
/// deleted to the last one. Seq allocation continues from it, so an event
/// appended to such an aggregate later still follows its history; a purge
/// may then delete an aggregate's newest row, and keeps this small row
/// instead (without it, every aggregate kept one outbox row for ever).
constexpr const char* schema_v4 = R"sql(
CREATE TABLE IF NOT EXISTS aggregate_heads (
  aggregate_id TEXT PRIMARY KEY NOT NULL CHECK (length(aggregate_id) > 0),
  last_seq INTEGER NOT NULL CHECK (last_seq >= 1)
) WITHOUT ROWID;
-- Every writer, even a process started before this migration that still
-- allocates MAX(seq) + 1 from the outbox alone, is refused a seq at or
-- below a purged aggregate's head.
CREATE TRIGGER IF NOT EXISTS outbox_seq_after_head BEFORE INSERT ON outbox
  WHEN NEW.seq <= (SELECT last_seq FROM aggregate_heads
                   WHERE aggregate_id = NEW.aggregate_id)
  BEGIN SELECT RAISE(ABORT, 'seq at or below the aggregate''s purged head');
  END;
)sql";

/// Version 4 -> 5: the database's identity, one row. Its id goes into the
/// owner stamp of the Redis keyspace the pipeline writes (broker/
/// keyspace_owner.hpp), so a command pointed at another database's keys
/// says so instead of reporting their differences as loss. first_schema is
/// the user_version the database had when it got its id: 0 for one created
/// by this version, 1..4 for one upgraded, whose events may still sit
/// under the key names older versions used (startup/keyspace_check.cpp).
constexpr const char* schema_v5 = R"sql(
CREATE TABLE IF NOT EXISTS database_identity (
  singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
  id TEXT NOT NULL CHECK (length(id) = 32),
  first_schema INTEGER NOT NULL CHECK (first_schema >= 0)
);
INSERT OR IGNORE INTO database_identity (singleton, id, first_schema)
  SELECT 1, lower(hex(randomblob(16))), user_version FROM pragma_user_version;
)sql";

/// Version 5 -> 6: the outbox's status CHECK as four comparisons instead
/// of an IN list. SQLite builds an ephemeral table for an IN list of more
/// than two values each time it evaluates one, and it evaluates this CHECK
/// on every insert and on every update that sets status: each claim, ack,
/// release and backoff of every row (a fifth of a relay's CPU). The rule
/// is the same; only its text changes. A CHECK that allows exactly what it
/// allowed may be rewritten in sqlite_master in place, since no row on
/// disk changes (SQLite's ALTER TABLE page, "Making Other Kinds Of Table
/// Schema Changes"); migrate() then bumps the schema cookie so that every
/// connection reloads the schema.
constexpr const char* schema_v6 = R"sql(
PRAGMA writable_schema = ON;
UPDATE sqlite_master
  SET sql = replace(sql,
    'status IN (''PENDING'', ''SENDING'', ''PUBLISHED'', ''FAILED'')',
    'status = ''PENDING'' OR status = ''SENDING'''
    || ' OR status = ''PUBLISHED'' OR status = ''FAILED''')
  WHERE type = 'table' AND name = 'outbox';
PRAGMA writable_schema = OFF;
)sql";

/// Version 6 -> 7: nothing on SQLite. The number is shared with
/// PostgreSQL, whose version 7 makes appends idempotent on their event_id
/// in SQL (storage/postgres/schema_v7.sql); here the writer looks the
/// event_id up inside its own write transaction (order_store.cpp).
constexpr const char* schema_v7 = "";

/// Version 7 -> 8: an event's headers (text/event_headers.hpp), a JSON
/// object's text or NULL. Adding a column rewrites no row; SQLite checks
/// the CHECK against the rows there, which all hold NULL. SQLite has no
/// ADD COLUMN IF NOT EXISTS: migrate() skips this on a database moved back
/// to an older user_version by hand that has the column already.
constexpr const char* schema_v8 = R"sql(
ALTER TABLE outbox ADD COLUMN headers TEXT
  CHECK (headers IS NULL OR (json_valid(headers)
                             AND json_type(headers) = 'object'));
)sql";

/// Also version 7 -> 8, run even where the column exists: a header that
/// is not a string (a plain INSERT's) would make the relays' queue entry
/// fail to encode, so the row is refused where it is written. Only rows
/// with headers pay for the look inside.
constexpr const char* headers_shape_triggers = R"sql(
CREATE TRIGGER IF NOT EXISTS outbox_headers_shape BEFORE INSERT ON outbox
  WHEN NEW.headers IS NOT NULL
   AND EXISTS (SELECT 1 FROM json_each(NEW.headers) WHERE type <> 'text')
  BEGIN SELECT RAISE(ABORT, 'headers must be a JSON object of strings');
  END;
CREATE TRIGGER IF NOT EXISTS outbox_headers_shape_update
  BEFORE UPDATE OF headers ON outbox
  WHEN NEW.headers IS NOT NULL
   AND EXISTS (SELECT 1 FROM json_each(NEW.headers) WHERE type <> 'text')
  BEGIN SELECT RAISE(ABORT, 'headers must be a JSON object of strings');
  END;
)sql";

/// Version 8 -> 9: nothing on SQLite. PostgreSQL's version 9 drops two
/// partial indexes so that a claim can be a HOT update there
/// (storage/postgres/schema_v9.sql); SQLite has no such update to save.
constexpr const char* schema_v9 = "";

/// Version 9 -> 10: when a row was last claimed (ms, the claim's `now`, the
/// clock its lease_until is counted from), so that `outbox status` reads a
/// lease's claim time instead of inferring it from lease_until and a ttl
/// that may have changed since. NULL for a row never claimed, or claimed
/// before this version. Not indexed: nothing looks rows up by it. Skipped,
/// as version 8's column, where a database moved back by hand has it.
constexpr const char* schema_v10 = R"sql(
ALTER TABLE outbox ADD COLUMN claimed_at INTEGER;
)sql";

/// migrations[v] upgrades a database from user_version v to v + 1.
constexpr const char* migrations[] = {
    schema_v1, schema_v2, schema_v3, schema_v4, schema_v5,
    schema_v6, schema_v7, schema_v8, schema_v9, schema_v10};
static_assert(std::size(migrations) == schema_version);

constexpr const char* our_tables[] = {"orders", "outbox", "request_keys",
                                      "aggregate_heads", "database_identity"};

bool has_outbox_column(SQLite::Database& db, const char* column) {
  SQLite::Statement query{db, "SELECT COUNT(*) FROM pragma_table_info('outbox')"
                              " WHERE name = ?"};
  query.bind(1, column);
  query.executeStep();
  return query.getColumn(0).getInt() > 0;
}

/// Whether migrations[v] adds a column the table has already (SQLite has
/// no ADD COLUMN IF NOT EXISTS).
bool column_there(SQLite::Database& db, int v) {
  return (v == 7 && has_outbox_column(db, "headers")) ||
         (v == 9 && has_outbox_column(db, "claimed_at"));
}

void bump_schema_cookie(SQLite::Database& db) {
  auto cookie = db.execAndGet("PRAGMA schema_version").getInt64();
  db.exec("PRAGMA schema_version = " + std::to_string(cookie + 1));
}

int read_user_version(SQLite::Database& db) {
  return db.execAndGet("PRAGMA user_version").getInt();
}

void check_not_newer(int version, const std::string& name) {
  if (version > schema_version)
    throw store_error(
        store_errc::schema,
        "database " + name + " has schema version " + std::to_string(version) +
            ", newer than this binary's " + std::to_string(schema_version) +
            ": use a newer outbox");
}

void check_no_foreign_tables(SQLite::Database& db, const std::string& name) {
  for (auto table : our_tables)
    if (db.tableExists(table))
      throw store_error(store_errc::schema,
                        "database " + name + " already has a table " + table +
                            " but was not initialised by outbox"
                            " (user_version 0)");
}

} // namespace

void migrate(SQLite::Database& db) {
  auto name = database_name(db);
  try {
    auto version = read_user_version(db);
    check_not_newer(version, name);
    if (version == schema_version)
      return;
    write_transaction(db, "migrate", name, [&] {
      // Another process may have migrated while we waited for the lock.
      version = read_user_version(db);
      check_not_newer(version, name);
      if (version == 0)
        check_no_foreign_tables(db, name);
      for (auto v = version; v < schema_version; ++v) {
        if (!column_there(db, v))
          db.exec(migrations[v]);
        if (v == 7)
          db.exec(headers_shape_triggers);
        // Version 6 edits sqlite_master itself: a new cookie makes every
        // connection, this one too, read the schema again, before the next
        // step (version 8's ADD COLUMN edits the table's text at offsets
        // taken from the schema this connection has parsed).
        if (v == 5)
          bump_schema_cookie(db);
      }
      db.exec("PRAGMA user_version = " + std::to_string(schema_version));
    });
  } catch (const SQLite::Exception&) {
    rethrow_as_store_error("migrate", name);
  }
}

void require_schema(SQLite::Database& db) {
  auto name = database_name(db);
  try {
    auto version = read_user_version(db);
    if (version == 0)
      throw store_error(store_errc::schema, "database " + name +
                                                " is not initialised: run "
                                                "`outbox init`");
    check_not_newer(version, name);
    if (version < schema_version)
      throw store_error(store_errc::schema,
                        "database " + name + " has schema version " +
                            std::to_string(version) +
                            ", older than this binary's " +
                            std::to_string(schema_version) +
                            ": run `outbox init` to upgrade it");
  } catch (const SQLite::Exception&) {
    rethrow_as_store_error("require_schema", name);
  }
}

} // namespace outbox::storage::sqlite
