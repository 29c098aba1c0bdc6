#pragma once

// One PGresult, owned: rows and typed fields of a statement's answer.

#include <libpq-fe.h>

#include <cstdint>
#include <memory>
#include <string>

namespace outbox::storage::postgres {

class result {
public:
  result() = default;
  explicit result(PGresult* raw) : raw_(raw, &PQclear) {}

  const PGresult* raw() const { return raw_.get(); }
  /// True when the statement succeeded (with rows or without).
  bool succeeded() const {
    auto status = raw_ ? PQresultStatus(raw_.get()) : PGRES_FATAL_ERROR;
    return status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK;
  }

  int rows() const { return raw_ ? PQntuples(raw_.get()) : 0; }
  bool null(int row, int column) const {
    return PQgetisnull(raw_.get(), row, column) != 0;
  }
  /// The field as text ("" when NULL).
  std::string text(int row, int column) const {
    return {PQgetvalue(raw_.get(), row, column),
            static_cast<std::size_t>(PQgetlength(raw_.get(), row, column))};
  }
  /// An integer field (0 when NULL).
  std::int64_t int64(int row, int column) const {
    return null(row, column) ? 0
                             : std::stoll(PQgetvalue(raw_.get(), row, column));
  }
  /// A boolean field (false when NULL).
  bool boolean(int row, int column) const {
    return !null(row, column) && PQgetvalue(raw_.get(), row, column)[0] == 't';
  }
  /// Rows a command changed (UPDATE, DELETE...).
  std::int64_t affected() const {
    const char* n = raw_ ? PQcmdTuples(raw_.get()) : "";
    return *n ? std::stoll(n) : 0;
  }

private:
  std::shared_ptr<PGresult> raw_;
};

} // namespace outbox::storage::postgres
