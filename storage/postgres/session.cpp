#include "storage/postgres/session.hpp"

#include "storage/postgres/pg_error.hpp"
#include "storage/postgres/sql_files.hpp"

#include <libpq-fe.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>

namespace outbox::storage::postgres {

namespace {

/// "PostgreSQL user@host:port/dbname" from the URI's own fields (never its
/// password), or from the server libpq reached.
std::string describe(const std::string& uri, PGconn* conn) {
  std::string user, host, port, dbname;
  if (conn != nullptr && PQstatus(conn) == CONNECTION_OK) {
    user = PQuser(conn);
    host = PQhost(conn);
    port = PQport(conn);
    dbname = PQdb(conn);
  } else if (auto* fields = PQconninfoParse(uri.c_str(), nullptr)) {
    for (auto* f = fields; f->keyword != nullptr; ++f) {
      std::string key = f->keyword;
      std::string value = f->val ? f->val : "";
      if (key == "user")
        user = value;
      else if (key == "host")
        host = value;
      else if (key == "port")
        port = value;
      else if (key == "dbname")
        dbname = value;
    }
    PQconninfoFree(fields);
  }
  std::string text = "PostgreSQL ";
  if (!user.empty())
    text += user + "@";
  text += host.empty() ? "localhost" : host;
  if (!port.empty())
    text += ":" + port;
  if (!dbname.empty())
    text += "/" + dbname;
  return text;
}

/// The parameters as libpq takes them: text, or nullptr for NULL.
std::vector<const char*> text_values(const std::vector<param>& params) {
  std::vector<const char*> values;
  values.reserve(params.size());
  for (const auto& p : params)
    values.push_back(p ? p->c_str() : nullptr);
  return values;
}

} // namespace

session::session(const db_options& options)
    : uri_(options.path), where_(describe(options.path, nullptr)),
      caller_clock_(options.caller_clock),
      // A relay's commits need not wait for the WAL flush (db_options.hpp):
      // a lost ack only publishes again, which the inbox absorbs. Orders
      // raise it back for their own transactions (order_store.cpp).
      relaxed_commits_(options.synchronous != "FULL"),
      lock_timeout_ms_(options.busy_timeout_ms) {
  connect();
}

session::~session() {
  if (conn_ != nullptr)
    PQfinish(conn_);
}

void session::connect() {
  if (conn_ != nullptr)
    PQfinish(conn_);
  conn_ = nullptr;
  prepared_ = false;
  // Defaults first: what the URI says comes later and wins. Keepalives and
  // tcp_user_timeout notice a host cut off from the server within seconds,
  // not the kernel's minutes.
  std::array<const char*, 8> keys{"application_name", "connect_timeout",
                                  "keepalives_idle",  "keepalives_interval",
                                  "keepalives_count", "tcp_user_timeout",
                                  "dbname",           nullptr};
  std::array<const char*, 8> values{"outbox", "10",    "5",          "2",
                                    "3",      "15000", uri_.c_str(), nullptr};
  // A URI libpq cannot parse: its message would quote the bad part, which
  // may be the password.
  char* parse_error = nullptr;
  auto* fields = PQconninfoParse(uri_.c_str(), &parse_error);
  if (parse_error != nullptr)
    PQfreemem(parse_error);
  if (fields == nullptr)
    throw store_error(store_errc::invalid_input,
                      "the database URI " + where_ +
                          " cannot be parsed: check its percent-encoding "
                          "and its parameters");
  PQconninfoFree(fields);
  auto* conn = PQconnectdbParams(keys.data(), values.data(), 1);
  if (conn == nullptr || PQstatus(conn) != CONNECTION_OK) {
    struct finish {
      PGconn* c;
      ~finish() {
        if (c != nullptr)
          PQfinish(c);
      }
    } guard{conn};
    back_off_after_failure(conn);
  }
  conn_ = conn;
  connect_backoff_ = std::chrono::milliseconds{0};
  ++generation_;
  backend_ = {PQbackendPID(conn_), ""};
  // Notices (a server shutting down says so before the error that ends
  // the session) go to the debug log, not straight to stderr: the error
  // that follows carries the same words in the log's format.
  PQsetNoticeProcessor(
      conn_,
      [](void*, const char* message) {
        spdlog::debug("PostgreSQL notice: {}", one_line(message));
      },
      nullptr);
  where_ = describe(uri_, conn_);
  std::string setup = "SET TIME ZONE 'UTC'; SET default_transaction_isolation"
                      " = 'read committed'";
  if (lock_timeout_ms_ > 0)
    setup += "; SET lock_timeout = " + std::to_string(lock_timeout_ms_);
  if (relaxed_commits_)
    setup += "; SET synchronous_commit = off";
  // The server side of a session whose client went away (a cut network)
  // must not keep its transaction, and with it an aggregate's lock or a
  // request key, for the kernel's two hours: it ends it after these, as
  // the client notices the cut.
  setup += "; SET idle_in_transaction_session_timeout = 60000"
           "; SET tcp_keepalives_idle = 5; SET tcp_keepalives_interval = 2"
           "; SET tcp_keepalives_count = 3; SET tcp_user_timeout = 15000";
  if (read_only_)
    setup += "; SET default_transaction_read_only = on";
  // Last: PQexec answers with the last statement's result.
  setup += "; SELECT backend_start FROM pg_stat_activity"
           " WHERE pid = pg_backend_pid()";
  auto started = exec("connect", setup);
  if (started.rows() == 1)
    backend_.started = started.text(0, 0);
}

void session::back_off_after_failure(PGconn* failed) {
  // Doubling from 50 ms to 2 s: the first retry after a cut is quick, a
  // server that stays away costs one attempt per 2 s per session.
  using std::chrono::milliseconds;
  connect_backoff_ =
      std::clamp(connect_backoff_ * 2, milliseconds{50}, milliseconds{2000});
  retry_at_ = std::chrono::steady_clock::now() + connect_backoff_;
  try {
    throw_connect_failure(where_, failed);
  } catch (const store_error& e) {
    last_connect_failure_ = e.what();
    last_connect_errc_ = e.code();
    throw;
  }
}

void session::ensure_ready(const char* context, bool statements) {
  if (conn_ == nullptr || PQstatus(conn_) != CONNECTION_OK) {
    // Inside a transaction the work so far is gone: say so, never go on
    // with half of it on a new connection.
    if (in_transaction_)
      throw_failure(context, where_, conn_, nullptr);
    if (std::chrono::steady_clock::now() < retry_at_)
      throw store_error(last_connect_errc_,
                        last_connect_failure_ +
                            " (not trying again for a moment: backing off)");
    connect();
  }
  if (statements && !prepared_) {
    // PREPARE names the tables: without the schema it fails, as a schema
    // error. DEALLOCATE first: a failed attempt may have left some.
    result answer{PQexec(conn_, "DEALLOCATE ALL")};
    answer = result{PQexec(conn_, sql_files::protocol)};
    if (!answer.succeeded())
      throw_failure(context, where_, conn_, answer.raw());
    prepared_ = true;
  }
}

void session::fail(const char* context, const PGresult* answer) {
  // A failed statement of an explicit transaction this object did not
  // open (a multi-statement exec) leaves the connection refusing every
  // statement until a ROLLBACK: end it here.
  if (!in_transaction_ && conn_ != nullptr &&
      PQstatus(conn_) == CONNECTION_OK &&
      PQtransactionStatus(conn_) == PQTRANS_INERROR)
    result{PQexec(conn_, "ROLLBACK")};
  throw_failure(context, where_, conn_, answer);
}

bool session::connected() const {
  return conn_ != nullptr && PQstatus(conn_) == CONNECTION_OK;
}

result session::checked(const char* context, PGresult* raw) {
  result answer{raw};
  if (!answer.succeeded())
    fail(context, answer.raw());
  return answer;
}

result session::run(const char* context, const char* statement,
                    const std::vector<param>& params) {
  ensure_ready(context, true);
  auto values = text_values(params);
  return checked(context, PQexecPrepared(conn_, statement,
                                         static_cast<int>(values.size()),
                                         values.data(), nullptr, nullptr, 0));
}

result session::exec(const char* context, const std::string& sql) {
  ensure_ready(context, false);
  return checked(context, PQexec(conn_, sql.c_str()));
}

result session::query(const char* context, const std::string& sql,
                      const std::vector<param>& params) {
  ensure_ready(context, false);
  auto values = text_values(params);
  return checked(context, PQexecParams(conn_, sql.c_str(),
                                       static_cast<int>(values.size()), nullptr,
                                       values.data(), nullptr, nullptr, 0));
}

void session::make_read_only() {
  read_only_ = true;
  exec("open", "SET default_transaction_read_only = on");
}

void session::commit(const char* context) {
  result answer{PQexec(conn_, "COMMIT")};
  in_transaction_ = false;
  if (answer.succeeded())
    return;
  if (PQstatus(conn_) != CONNECTION_OK)
    throw commit_outcome_unknown(std::string{context} +
                                     ": lost the connection to " + where_ +
                                     " during COMMIT",
                                 backend_);
  fail(context, answer.raw());
}

void session::roll_back() {
  if (!in_transaction_)
    return;
  in_transaction_ = false;
  if (conn_ != nullptr && PQstatus(conn_) == CONNECTION_OK)
    result{PQexec(conn_, "ROLLBACK")};
}

param session::time(millis now) const {
  if (caller_clock_)
    return std::to_string(now);
  return std::nullopt;
}

} // namespace outbox::storage::postgres
