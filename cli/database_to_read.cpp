#include "cli/database_to_read.hpp"

#include "storage/store_error.hpp"

#include <SQLiteCpp/Database.h>

#include <filesystem>

namespace outbox::cli {

std::unique_ptr<SQLite::Database>
open_existing_database_to_read(const storage::db_options& options) {
  std::error_code ec;
  if (!std::filesystem::exists(options.path, ec))
    throw storage::store_error(storage::store_errc::io,
                               "no database at " + options.path +
                                   " (run `outbox init` first)");
  auto db = storage::open_database_to_read(options);
  storage::require_schema(*db);
  return db;
}

} // namespace outbox::cli
