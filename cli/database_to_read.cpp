#include "cli/database_to_read.hpp"

#include "storage/db_folder.hpp"

namespace outbox::cli {

std::unique_ptr<storage::database>
open_existing_database_to_read(const storage::db_options& options) {
  storage::require_database_file(options);
  return storage::connect(options, storage::open_mode::read_only);
}

} // namespace outbox::cli
