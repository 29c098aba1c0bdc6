// The one place a backend is chosen. SQLite is the only one so far; the
// next reads its choice from the `db` settings here, and nothing outside
// storage/ changes.

#include "storage/database.hpp"

#include "storage/sqlite/connection.hpp"

namespace outbox::storage {

std::unique_ptr<database> connect(const db_options& options, open_mode mode) {
  return sqlite::connect(options, mode);
}

} // namespace outbox::storage
