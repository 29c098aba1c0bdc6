#include "storage/db_folder.hpp"

#include "storage/private_files.hpp"
#include "storage/store_error.hpp"

#include <filesystem>
#include <system_error>

namespace outbox::storage {

bool is_default_database(const db_options& options) {
  return options.path == default_db_path;
}

bool database_file_missing(const db_options& options) {
  std::error_code ec;
  return !options.postgres() && !std::filesystem::exists(options.path, ec);
}

void require_database_file(const db_options& options) {
  if (database_file_missing(options))
    throw store_error(store_errc::io, "no database at " + options.path +
                                          " (run `outbox init` first)");
}

void prepare_database_folder(const db_options& options) {
  namespace fs = std::filesystem;
  if (options.postgres())
    return;
  auto folder = fs::path{options.path}.parent_path();
  std::error_code ec;
  if (folder.empty() || fs::exists(folder, ec))
    return;
  if (!is_default_database(options))
    throw store_error(store_errc::io, "cannot open database " + options.path +
                                          ": folder " + folder.string() +
                                          " does not exist (create it, or "
                                          "name another --db)");
  try {
    create_private_folders(folder);
  } catch (const std::system_error& e) {
    throw store_error(store_errc::io,
                      "cannot open database " + options.path + ": " + e.what());
  }
}

} // namespace outbox::storage
