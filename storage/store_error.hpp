#pragma once

#include <stdexcept>
#include <string>

namespace outbox::storage {

/// Why a storage call failed. SQLite exceptions are caught at the store
/// boundary and turned into one of these, so callers never see SQLiteCpp.
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
};

/// Short stable name of a code, for messages and JSON ("busy", "io", ...).
const char* to_string(store_errc code);

class store_error : public std::runtime_error {
public:
  store_error(store_errc code, const std::string& what)
      : std::runtime_error(what), code_(code) {}

  store_errc code() const noexcept { return code_; }

private:
  store_errc code_;
};

/// Rethrows the exception in flight as a store_error; `context` names the
/// operation ("place_order", "claim") so the message says what failed.
[[noreturn]] void rethrow_as_store_error(const char* context);

/// As above, naming the database file too, so that "busy", "io" and "schema"
/// messages say which file is locked, unwritable or not an outbox database.
[[noreturn]] void rethrow_as_store_error(const char* context,
                                         const std::string& database);

} // namespace outbox::storage
