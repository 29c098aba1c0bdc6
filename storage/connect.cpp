// The one place a backend is chosen: a PostgreSQL URI in `db.path` opens
// PostgreSQL, anything else is a SQLite file. Nothing outside storage/
// changes with the backend.

#include "storage/database.hpp"

#include "storage/postgres/connection.hpp"
#include "storage/sqlite/connection.hpp"

namespace outbox::storage {

std::unique_ptr<database> connect(const db_options& options, open_mode mode) {
  if (options.postgres())
    return postgres::connect(options, mode);
  return sqlite::connect(options, mode);
}

} // namespace outbox::storage
