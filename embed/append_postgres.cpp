#include "embed/outbox/append.hpp"

#include "embed/append_request.hpp"

#include <libpq-fe.h>

#include <memory>
#include <string>

namespace outbox {

namespace {

/// The same function every writer in SQL uses (storage/postgres/
/// schema_v8.sql): it takes the aggregate's lock, allocates the seq, is
/// idempotent on the event_id and adds a traceparent unless the headers
/// ($5, NULL for none) hold one.
constexpr const char* append_sql =
    "SELECT event_id, seq, replayed FROM outbox_append_once($1, $2, "
    "$3::json, $4::uuid, NULL, $5::json)";

using result_ptr = std::unique_ptr<PGresult, decltype(&PQclear)>;

/// What went wrong with `result` (or the connection), and its SQLSTATE.
database_error error_of(PGconn* conn, const PGresult* result) {
  const char* primary =
      result ? PQresultErrorField(result, PG_DIAG_MESSAGE_PRIMARY) : nullptr;
  std::string message = primary ? primary : PQerrorMessage(conn);
  while (!message.empty() && message.back() == '\n')
    message.pop_back();
  const char* state =
      result ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  return {"outbox::append: " + message, state ? state : ""};
}

/// Runs a statement without parameters or rows; throws database_error.
void command(PGconn* conn, const char* sql) {
  result_ptr r{PQexec(conn, sql), &PQclear};
  if (!r || PQresultStatus(r.get()) != PGRES_COMMAND_OK)
    throw error_of(conn, r.get());
}

} // namespace

appended append(PGconn* conn, const event& e) {
  auto request = embed::valid_request(e);
  if (PQtransactionStatus(conn) != PQTRANS_INTRANS)
    throw no_transaction("outbox::append needs a transaction open on the "
                         "connection (BEGIN), and not one already failed");
  const char* values[5] = {
      request.aggregate_id.c_str(), request.event_type.c_str(),
      request.payload.c_str(),
      request.event_id.empty() ? nullptr : request.event_id.c_str(),
      request.headers.empty() ? nullptr : request.headers.c_str()};
  // Under a savepoint: a refusal (the event_id names another event) rolls
  // back this statement alone, and the caller's transaction goes on.
  command(conn, "SAVEPOINT outbox_append");
  result_ptr result{
      PQexecParams(conn, append_sql, 5, nullptr, values, nullptr, nullptr, 0),
      &PQclear};
  if (!result || PQresultStatus(result.get()) != PGRES_TUPLES_OK ||
      PQntuples(result.get()) != 1) {
    auto error = error_of(conn, result.get());
    command(conn, "ROLLBACK TO SAVEPOINT outbox_append");
    command(conn, "RELEASE SAVEPOINT outbox_append");
    // 23505: the event_id already names another event.
    if (error.sqlstate() == "23505")
      throw refused_event(error.what());
    throw error;
  }
  command(conn, "RELEASE SAVEPOINT outbox_append");
  return {PQgetvalue(result.get(), 0, 0),
          std::stoll(PQgetvalue(result.get(), 0, 1)),
          std::string{PQgetvalue(result.get(), 0, 2)} == "t"};
}

} // namespace outbox
