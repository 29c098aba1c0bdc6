#pragma once

// SQLite's errors turned into store_error: the one place that knows SQLite's
// result codes, so storage/store_error.hpp stays the same for any backend.

#include "storage/store_error.hpp"

#include <string>

namespace outbox::storage::sqlite {

/// Rethrows the exception in flight as a store_error; `context` names the
/// operation ("place_order", "claim") so the message says what failed.
[[noreturn]] void rethrow_as_store_error(const char* context);

/// As above, naming the database file too, so that "busy", "io" and "schema"
/// messages say which file is locked, unwritable or not an outbox database.
[[noreturn]] void rethrow_as_store_error(const char* context,
                                         const std::string& database);

} // namespace outbox::storage::sqlite
