#pragma once

#include <stdexcept>
#include <string>
#include <utility>

namespace outbox::storage {

/// Why a storage call failed. A backend catches its own exceptions at the
/// store boundary and turns them into one of these (SQLite's:
/// storage/sqlite/sqlite_error.hpp), so callers never see the backend's.
enum class store_errc {
  /// The database stayed locked by another connection past busy_timeout.
  busy,
  /// The file or its folder cannot be opened, created or written.
  io,
  /// The file is not an outbox database, or is newer than this binary.
  schema,
  /// A request broke a rule of the data model (bad sku, qty, event fields).
  invalid_input,
  /// Anything else SQLite reported.
  internal,
  /// A write transaction's COMMIT was sent and its answer lost with the
  /// connection, and whether it committed could not be found out yet (the
  /// server unreachable): it did or it did not, entirely. Retrying the same
  /// requests (their request keys and event ids) is safe and tells which;
  /// writing them anew is not. Never folded into busy, which promises
  /// that nothing was written.
  outcome_unknown,
};

/// Short stable name of a code, for messages and JSON ("busy", "io", ...).
const char* to_string(store_errc code);

class store_error : public std::runtime_error {
public:
  store_error(store_errc code, const std::string& what,
              std::string database_said = {})
      : std::runtime_error(what), code_(code),
        database_said_(std::move(database_said)) {}

  store_errc code() const noexcept { return code_; }
  /// The database's own words for a statement it refused ("relation \"x\"
  /// does not exist"), without what() adds for the outbox's own tables;
  /// "" when it gave none. For statements that are not the outbox's (a
  /// consumer's effects, sink/).
  const std::string& database_said() const noexcept { return database_said_; }

private:
  store_errc code_;
  std::string database_said_;
};

} // namespace outbox::storage
