#include "outbox/append.hpp"

#include "embed/append_request.hpp"

#include <libpq-fe.h>

#include <memory>
#include <string>

namespace outbox {

namespace {

/// The same function every writer in SQL uses (storage/postgres/
/// schema_v7.sql): it takes the aggregate's lock, allocates the seq and is
/// idempotent on the event_id.
constexpr const char* append_sql =
    "SELECT event_id, seq, replayed FROM outbox_append_once($1, $2, "
    "$3::json, $4::uuid)";

using result_ptr = std::unique_ptr<PGresult, decltype(&PQclear)>;

} // namespace

appended append(PGconn* conn, const event& e) {
  auto request = embed::valid_request(e);
  const char* values[4] = {request.aggregate_id.c_str(),
                           request.event_type.c_str(), request.payload.c_str(),
                           request.event_id.empty() ? nullptr
                                                    : request.event_id.c_str()};
  result_ptr result{
      PQexecParams(conn, append_sql, 4, nullptr, values, nullptr, nullptr, 0),
      &PQclear};
  if (!result || PQresultStatus(result.get()) != PGRES_TUPLES_OK ||
      PQntuples(result.get()) != 1) {
    const char* primary =
        result ? PQresultErrorField(result.get(), PG_DIAG_MESSAGE_PRIMARY)
               : nullptr;
    std::string message = primary ? primary : PQerrorMessage(conn);
    while (!message.empty() && message.back() == '\n')
      message.pop_back();
    const char* state =
        result ? PQresultErrorField(result.get(), PG_DIAG_SQLSTATE) : nullptr;
    // 23505: the event_id already names another event.
    if (state && std::string{state} == "23505")
      throw refused_event(message);
    throw std::runtime_error("outbox::append: " + message);
  }
  return {PQgetvalue(result.get(), 0, 0),
          std::stoll(PQgetvalue(result.get(), 0, 1)),
          std::string{PQgetvalue(result.get(), 0, 2)} == "t"};
}

} // namespace outbox
