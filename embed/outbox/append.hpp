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
#include <stdexcept>
#include <string>

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
  std::string event_type;
  /// Its data: a JSON object.
  std::string payload;
  /// A UUID chosen by the caller, so that a retry after a lost COMMIT is
  /// the same event: appending an id that exists writes nothing and
  /// returns that event. Empty: a new UUIDv7.
  std::string event_id = {};
};

/// The event in the outbox.
struct appended {
  std::string event_id = {};
  std::int64_t seq = 0;
  /// event_id named an event already there: nothing was written.
  bool replayed = false;
};

/// An event the outbox refuses, nothing written: its message names the
/// field and why (a payload that is not a JSON object, an empty or
/// control-character aggregate or type, an event_id that is not a UUID or
/// already names another aggregate's or type's event, an OrderPlaced the
/// consumers would refuse).
class refused_event : public std::invalid_argument {
public:
  using std::invalid_argument::invalid_argument;
};

/// SQLite: appends `e` in the transaction open on `db`. Open it with BEGIN
/// IMMEDIATE (SQLite::Transaction(db, SQLite::TransactionBehavior::
/// IMMEDIATE)): a deferred one may be refused the write lock (SQLITE_BUSY),
/// which is safe but means running the transaction again. Throws
/// refused_event, std::logic_error when no transaction is open (the event
/// would commit alone), and SQLite::Exception from the database.
appended append(SQLite::Database& db, const event& e);

/// PostgreSQL: appends `e` on `conn` (outbox_append_once), in the caller's
/// transaction when one is open. Throws refused_event, and
/// std::runtime_error with the server's message for any other error (the
/// transaction is then aborted: roll it back; SQLSTATE 40001 under
/// REPEATABLE READ or SERIALIZABLE means run it again).
appended append(PGconn* conn, const event& e);

} // namespace outbox
