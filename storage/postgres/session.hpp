#pragma once

// One libpq connection to an outbox database on PostgreSQL, as every store
// of one storage::database shares it (docs/postgres-protocol.md).
//
// It connects with the URI in db_options::path, loads the protocol's
// prepared statements (protocol/*.sql) once the schema is there, and comes
// back by itself after the connection broke (a server restart, a
// terminated session, a network cut): the call that finds it broken
// reconnects first; the call that broke it throws store_error(busy), which
// the actors treat as an outage and retry. Errors leave as store_error
// (pg_error.hpp); no message carries a password.

#include "storage/clock.hpp"
#include "storage/db_options.hpp"
#include "storage/postgres/libpq_handles.hpp"
#include "storage/postgres/result.hpp"
#include "storage/store_error.hpp"

#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace outbox::storage::postgres {

/// A statement parameter in text format; nullopt is SQL NULL.
using param = std::optional<std::string>;

/// One server process of one connection. A pid alone is not enough to
/// find it again: after a server restart the same pid may serve another
/// client, so its start time goes with it (pg_stat_activity).
struct backend_identity {
  int pid = 0;
  /// backend_start, as text ("" when pg_stat_activity did not show it).
  std::string started;
};

class session {
public:
  /// Connects; throws store_error (busy when the server cannot be reached,
  /// io when it refuses us).
  explicit session(const db_options& options);
  ~session();
  session(const session&) = delete;
  session& operator=(const session&) = delete;

  /// Runs one of the prepared statements of protocol/*.sql, as its own
  /// transaction or inside transaction().
  result run(const char* context, const char* statement,
             const std::vector<param>& params);
  /// Runs SQL text (one or more statements, no parameters).
  result exec(const char* context, const std::string& sql);
  /// Runs one statement of SQL text with parameters ($1...).
  result query(const char* context, const std::string& sql,
               const std::vector<param>& params);

  /// Every later transaction only reads (default_transaction_read_only),
  /// this connection's and a reconnected one's.
  void make_read_only();

  /// BEGIN (`begin`), body(), COMMIT; ROLLBACK when body throws. A
  /// connection lost in COMMIT throws commit_outcome_unknown.
  template <class Body>
  auto transaction(const char* context, Body body, const char* begin = "BEGIN")
      -> decltype(body());

  /// The time parameter for `now`: the caller's milliseconds when the
  /// options ask for the caller's clock (tests), else NULL, which the
  /// statements read as the database's clock_timestamp().
  param time(millis now) const;
  bool caller_clock() const { return caller_clock_; }

  /// "PostgreSQL user@host:port/dbname": where, for messages.
  const std::string& where() const { return where_; }

  /// Counts connections made: a change says the session's temporary
  /// tables and extra statements are gone.
  int generation() const { return generation_; }

  /// True while the connection is up (a broken one reconnects at the next
  /// call).
  bool connected() const;
  /// Loads the protocol's statements now, if this connection has not.
  void prepare() { ensure_ready("prepare", true); }

  /// Forgets the prepared statements (after a migration made the tables
  /// they name): the next run() prepares them again.
  void forget_statements() { prepared_ = false; }

private:
  void connect();
  /// Throws the connect failure of `failed` (busy or io), and waits longer
  /// before the next attempt.
  [[noreturn]] void back_off_after_failure(PGconn* failed);
  void commit(const char* context);
  void roll_back();
  void ensure_ready(const char* context, bool statements);
  [[noreturn]] void fail(const char* context, const PGresult* answer);
  /// Owns `raw`; throws (fail) unless the statement succeeded.
  result checked(const char* context, PGresult* raw);

  std::string uri_;
  std::string where_;
  bool caller_clock_ = false;
  bool relaxed_commits_ = false;
  /// lock_timeout: how long a statement waits for another transaction's
  /// row lock (an aggregate's head) before failing busy, as SQLite's
  /// busy_timeout.
  int lock_timeout_ms_ = 0;
  bool read_only_ = false;
  PGconn* conn_ = nullptr;
  bool prepared_ = false;
  int generation_ = 0;
  backend_identity backend_;
  bool in_transaction_ = false;
  /// After a failed connect, the next is not tried before retry_at_: a
  /// writer retrying its groups every few ms would otherwise open hundreds
  /// of connections a second against a server that refuses them.
  std::chrono::steady_clock::time_point retry_at_{};
  std::chrono::milliseconds connect_backoff_{0};
  std::string last_connect_failure_;
  store_errc last_connect_errc_ = store_errc::busy;
};

/// Thrown by transaction() when the connection broke during COMMIT: the
/// transaction may or may not have committed. An outage (busy) to callers
/// whose writes are safe to repeat (a relay's ack); the order store catches
/// it first, ends `lost_backend` and looks its event ids up, and says
/// store_errc::outcome_unknown when it cannot.
class commit_outcome_unknown : public store_error {
public:
  commit_outcome_unknown(const std::string& what, backend_identity lost)
      : store_error(store_errc::busy, what), lost_(std::move(lost)) {}
  /// The server process whose COMMIT's answer was lost: it may still be
  /// finishing that transaction.
  const backend_identity& lost_backend() const { return lost_; }

private:
  backend_identity lost_;
};

template <class Body>
auto session::transaction(const char* context, Body body, const char* begin)
    -> decltype(body()) {
  exec(context, begin);
  in_transaction_ = true;
  try {
    if constexpr (std::is_void_v<decltype(body())>) {
      body();
      commit(context);
    } else {
      auto value = body();
      commit(context);
      return value;
    }
  } catch (...) {
    roll_back();
    throw;
  }
}

} // namespace outbox::storage::postgres
