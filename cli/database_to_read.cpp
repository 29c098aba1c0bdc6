#include "cli/database_to_read.hpp"

#include "storage/store_error.hpp"

#include <filesystem>

namespace outbox::cli {

std::unique_ptr<storage::database>
open_existing_database_to_read(const storage::db_options& options) {
  std::error_code ec;
  if (!options.postgres() && !std::filesystem::exists(options.path, ec))
    throw storage::store_error(storage::store_errc::io,
                               "no database at " + options.path +
                                   " (run `outbox init` first)");
  return storage::connect(options, storage::open_mode::read_only);
}

} // namespace outbox::cli
