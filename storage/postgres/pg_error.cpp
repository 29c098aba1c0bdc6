#include "storage/postgres/pg_error.hpp"

#include <libpq-fe.h>

#include <string_view>

namespace outbox::storage::postgres {

namespace {

bool starts(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

} // namespace

std::string one_line(const char* message) {
  std::string text;
  for (const char* c = message ? message : ""; *c != '\0'; ++c) {
    bool space = *c == '\n' || *c == '\t' || *c == '\r' || *c == ' ';
    if (!space)
      text += *c;
    else if (!text.empty() && text.back() != ' ')
      text += ' ';
  }
  while (!text.empty() && text.back() == ' ')
    text.pop_back();
  return text;
}

store_errc classify(const std::string& sqlstate) {
  std::string_view s = sqlstate;
  if (starts(s, "08") || starts(s, "57P") || starts(s, "53") || s == "40001" ||
      s == "40P01" || s == "55P03" || s == "57014")
    return store_errc::busy;
  if (s == "42P01" || s == "42883" || s == "26000" || s == "42703")
    return store_errc::schema;
  if (starts(s, "22") || starts(s, "23"))
    return store_errc::invalid_input;
  if (starts(s, "28") || s == "3D000" || s == "42501" || s == "25006" ||
      starts(s, "58"))
    return store_errc::io;
  return store_errc::internal;
}

void throw_failure(const char* context, const std::string& where, PGconn* conn,
                   const PGresult* answer) {
  std::string msg = std::string{context} + ": ";
  if (conn == nullptr || PQstatus(conn) != CONNECTION_OK) {
    throw store_error(store_errc::busy,
                      msg + "lost the connection to " + where + ": " +
                          one_line(conn ? PQerrorMessage(conn) : nullptr));
  }
  const char* state =
      answer ? PQresultErrorField(answer, PG_DIAG_SQLSTATE) : nullptr;
  std::string sqlstate = state ? state : "";
  // The primary message alone: the full one spans lines (LINE 1: ...).
  const char* primary =
      answer ? PQresultErrorField(answer, PG_DIAG_MESSAGE_PRIMARY) : nullptr;
  auto said = one_line(primary ? primary : PQerrorMessage(conn));
  if (said.empty())
    said = one_line(PQerrorMessage(conn));
  auto errc = sqlstate.empty() ? store_errc::internal : classify(sqlstate);
  switch (errc) {
  case store_errc::busy:
    msg += where + " could not do it now (SQLSTATE " + sqlstate + "): " + said;
    break;
  case store_errc::schema:
    msg += where +
           " is not an outbox database, or not initialised (run "
           "outbox init): " +
           said;
    break;
  case store_errc::io:
    msg += where + " refused it (SQLSTATE " + sqlstate + "): " + said;
    break;
  case store_errc::invalid_input:
    msg += said;
    break;
  case store_errc::internal:
  case store_errc::outcome_unknown: // classify never returns it
    msg += "PostgreSQL error" +
           (sqlstate.empty() ? std::string{} : " " + sqlstate) + " on " +
           where + ": " + said;
    break;
  }
  throw store_error(errc, msg, said);
}

void throw_connect_failure(const std::string& where, PGconn* conn) {
  auto said = one_line(conn ? PQerrorMessage(conn) : "out of memory");
  bool refused = conn != nullptr &&
                 (PQconnectionNeedsPassword(conn) ||
                  said.find("authentication failed") != std::string::npos ||
                  said.find("does not exist") != std::string::npos ||
                  said.find("no pg_hba.conf entry") != std::string::npos ||
                  said.find("no password supplied") != std::string::npos);
  if (refused)
    throw store_error(store_errc::io, "cannot open " + where + ": " + said);
  throw store_error(store_errc::busy,
                    "cannot reach " + where + " (is it running?): " + said);
}

} // namespace outbox::storage::postgres
