#pragma once

#include "storage/database.hpp"

#include <memory>

namespace outbox::cli {

/// Opens an existing, initialised database read-only, for the commands that
/// only read it (status, verify, failed), so they work on a file the user
/// may read but not write (storage::open_mode::read_only). A missing file
/// is a store_error(io) telling the user to run `outbox init`.
std::unique_ptr<storage::database>
open_existing_database_to_read(const storage::db_options& options);

} // namespace outbox::cli
