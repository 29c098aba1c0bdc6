#pragma once

#include "storage/clock.hpp"

#include <optional>
#include <string_view>

namespace outbox::storage {

/// Lifecycle of an outbox row (README, "Guarantees and how they are
/// tested"). The database stores it as text, row_status_text's: the SQL
/// names those texts itself, since a partial index serves only a query
/// that repeats its literal term (status = 'PENDING').
enum class row_status { pending, sending, published, failed };

/// Every status, in the order a row goes through them (what `outbox
/// status` lists, whatever the database's order).
inline constexpr row_status row_lifecycle[] = {
    row_status::pending, row_status::sending, row_status::published,
    row_status::failed};

/// The text the database stores for `status`.
constexpr const char* row_status_text(row_status status) {
  switch (status) {
  case row_status::pending:
    return "PENDING";
  case row_status::sending:
    return "SENDING";
  case row_status::published:
    return "PUBLISHED";
  case row_status::failed:
    return "FAILED";
  }
  return "";
}

/// The status stored as `text`; nothing for a text no status has.
constexpr std::optional<row_status> row_status_of(std::string_view text) {
  for (auto status : row_lifecycle)
    if (text == row_status_text(status))
      return status;
  return std::nullopt;
}

} // namespace outbox::storage
