#include "storage/postgres/result.hpp"

#include <libpq-fe.h>

namespace outbox::storage::postgres {

result::result(PGresult* raw) : raw_(raw, &PQclear) {}

bool result::succeeded() const {
  auto status = raw_ ? PQresultStatus(raw_.get()) : PGRES_FATAL_ERROR;
  return status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK;
}

int result::rows() const {
  return raw_ ? PQntuples(raw_.get()) : 0;
}

bool result::null(int row, int column) const {
  return PQgetisnull(raw_.get(), row, column) != 0;
}

std::string result::text(int row, int column) const {
  return {PQgetvalue(raw_.get(), row, column),
          static_cast<std::size_t>(PQgetlength(raw_.get(), row, column))};
}

std::int64_t result::int64(int row, int column) const {
  return null(row, column) ? 0
                           : std::stoll(PQgetvalue(raw_.get(), row, column));
}

bool result::boolean(int row, int column) const {
  return !null(row, column) && PQgetvalue(raw_.get(), row, column)[0] == 't';
}

std::int64_t result::affected() const {
  const char* n = raw_ ? PQcmdTuples(raw_.get()) : "";
  return *n ? std::stoll(n) : 0;
}

} // namespace outbox::storage::postgres
