#pragma once

// outbox for applications that embed it: append an event to the outbox
// inside the application's own transaction, on its own connection, next to
// the business rows the event tells about. Both commit or neither does;
// `outbox relay` (or `outbox run`) publishes the event afterwards.
//
//   find_package(outbox REQUIRED)
//   target_link_libraries(app PRIVATE outbox::append)
//
// The database is one `outbox init` made (or upgraded). Every event of one
// aggregate gets the next seq of that aggregate, under the aggregate's lock
// (PostgreSQL) or the write lock (SQLite), so consumers apply them in the
// order they were appended.

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>

namespace SQLite {
class Database;
}
typedef struct pg_conn PGconn;

namespace outbox {

/// One event to append.
struct event {
  /// What the event belongs to; its events are applied in order. Text
  /// without control characters.
  std::string aggregate_id;
  /// What happened ("InvoiceIssued"). Text without control characters.
  /// OrderPlaced, OrderPaid and OrderShipped are the demo's: `outbox
  /// verify` expects each at most once per aggregate.
  std::string event_type;
  /// Its data: a JSON object.
  std::string payload;
  /// A UUID chosen by the caller, so that a retry after a lost COMMIT is
  /// the same event: appending an id that exists writes nothing and
  /// returns that event (while its row exists: `outbox purge` forgets it).
  /// Empty: a new UUIDv7.
  std::string event_id = {};
  /// Metadata that is not the event's data, carried with it to the
  /// consumers (the queue entry's `headers`): at most 64 names of 1 to 128
  /// bytes of text without control characters, each value UTF-8 text of at
  /// most 4096 bytes. A W3C `traceparent` ("00-<trace id>-<span id>-
  /// <flags>") puts the event in the caller's trace; without one, the
  /// event gets a trace of its own.
  std::map<std::string, std::string> headers = {};
};

/// The event in the outbox.
struct appended {
  std::string event_id = {};
  std::int64_t seq = 0;
  /// event_id named an event already there: nothing was written.
  bool replayed = false;
};

/// An event the outbox refuses, nothing written and the caller's
/// transaction still usable: its message names the field and why (a payload
/// that is not a JSON object, an empty aggregate or type or one that is not
/// UTF-8 text without control characters, an event_id that is not a UUID or
/// already names another aggregate's or type's event, an OrderPlaced the
/// consumers would refuse, headers past their limits or a traceparent that
/// is not one). The payload's size is not checked here: the
/// relays refuse an entry over broker.max_entry_bytes (the row ends FAILED).
class refused_event : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// An append outside a transaction: the event would commit alone, apart
/// from the rows it tells about, which is the loss the outbox prevents.
class no_transaction : public std::logic_error {
public:
  using std::logic_error::logic_error;
};

/// PostgreSQL refused the statement: `sqlstate()` tells a retry (40001
/// serialization failure, 40P01 deadlock: run the transaction again) from
/// anything else (42501: the role may not append; see docs/deploy.md).
class database_error : public std::runtime_error {
public:
  database_error(const std::string& message, std::string sqlstate)
      : std::runtime_error(message), sqlstate_(std::move(sqlstate)) {}
  const std::string& sqlstate() const { return sqlstate_; }

private:
  std::string sqlstate_;
};

/// SQLite: appends `e` in the transaction open on `db`. Open it with BEGIN
/// IMMEDIATE (SQLite::Transaction(db, SQLite::TransactionBehavior::
/// IMMEDIATE)) and give `db` a busy timeout: a deferred one may be refused
/// the write lock (SQLITE_BUSY), which is safe but means running the
/// transaction again. Throws refused_event, no_transaction, and
/// SQLite::Exception from the database (a database `outbox init` has not
/// made: "no such table").
appended append(SQLite::Database& db, const event& e);

/// PostgreSQL: appends `e` on `conn` (outbox_append_once) in the caller's
/// open transaction, under a savepoint, so a refusal leaves the
/// transaction as it was. Throws refused_event, no_transaction (also for a
/// transaction that already failed), and database_error for any other
/// error, rolled back to the savepoint as well: 40001 and 40P01 still mean
/// rolling back and running the whole transaction again. Appending to
/// several aggregates in one transaction: in a fixed order (sorted), or two
/// transactions may deadlock (40P01). The role needs outbox_writer's
/// privileges (GRANT outbox_writer TO your_role; docs/deploy.md).
appended append(PGconn* conn, const event& e);

} // namespace outbox
