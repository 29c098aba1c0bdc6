#pragma once

// One PGresult, owned: rows and typed fields of a statement's answer.

#include "storage/postgres/libpq_handles.hpp"

#include <cstdint>
#include <memory>
#include <string>

namespace outbox::storage::postgres {

class result {
public:
  result() = default;
  /// Owns `raw` (PQclear once the last copy goes).
  explicit result(PGresult* raw);

  const PGresult* raw() const { return raw_.get(); }
  /// True when the statement succeeded (with rows or without).
  bool succeeded() const;

  int rows() const;
  bool null(int row, int column) const;
  /// The field as text ("" when NULL).
  std::string text(int row, int column) const;
  /// An integer field (0 when NULL).
  std::int64_t int64(int row, int column) const;
  /// A boolean field (false when NULL).
  bool boolean(int row, int column) const;
  /// Rows a command changed (UPDATE, DELETE...).
  std::int64_t affected() const;

private:
  std::shared_ptr<PGresult> raw_;
};

} // namespace outbox::storage::postgres
