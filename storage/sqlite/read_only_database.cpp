#include "storage/sqlite/database.hpp"

#include "storage/sqlite/sqlite_error.hpp"
#include "storage/store_error.hpp"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Exception.h>
#include <sqlite3.h>

#include <cstdio>
#include <filesystem>
#include <string>

namespace outbox::storage::sqlite {

namespace {

/// `path` as a file: URI. The characters a URI gives a meaning to are
/// escaped, so a path with '?', '#' or '%' in it names the same file.
std::string file_uri(const std::string& path) {
  std::string uri = "file:";
  for (unsigned char c : path) {
    if (c == '?' || c == '#' || c == '%' || c < 0x20 || c >= 0x7f) {
      char escaped[4];
      std::snprintf(escaped, sizeof escaped, "%%%02X", c);
      uri += escaped;
    } else {
      uri += static_cast<char>(c);
    }
  }
  return uri;
}

std::unique_ptr<SQLite::Database> open_read_only(const std::string& name,
                                                 const db_options& options) {
  auto db = std::make_unique<SQLite::Database>(
      name, SQLite::OPEN_READONLY | SQLite::OPEN_URI, options.busy_timeout_ms);
  // The first read is where SQLite opens the WAL index (-shm): fail here,
  // where the caller can still choose another way in.
  db->execAndGet("PRAGMA user_version");
  return db;
}

/// SQLite could not make the WAL index (-shm) because the folder is not
/// the user's to write.
bool cannot_make_wal_index(const SQLite::Exception& e) {
  return e.getExtendedErrorCode() == SQLITE_READONLY_DIRECTORY ||
         e.getExtendedErrorCode() == SQLITE_READONLY_CANTINIT ||
         (e.getErrorCode() & 0xff) == SQLITE_CANTOPEN;
}

} // namespace

std::unique_ptr<SQLite::Database>
open_database_to_read(const db_options& options) {
  if (options.path.empty())
    throw store_error(store_errc::invalid_input,
                      "database path must not be empty");
  std::error_code ec;
  if (std::filesystem::is_directory(options.path, ec))
    throw store_error(store_errc::io, "cannot open database " + options.path +
                                          ": it is a folder, not a file");
  try {
    try {
      return open_read_only(file_uri(options.path), options);
    } catch (const SQLite::Exception& e) {
      // A -wal file with frames holds commits not yet in the database
      // file: reading without it (immutable) would show an older state, so
      // only a database with no -wal, or an empty one (a reader left it),
      // is read that way.
      auto wal = options.path + "-wal";
      if (!cannot_make_wal_index(e) ||
          (std::filesystem::exists(wal, ec) &&
           std::filesystem::file_size(wal, ec) != 0))
        throw;
      return open_read_only(file_uri(options.path) + "?immutable=1", options);
    }
  } catch (const SQLite::Exception&) {
    rethrow_as_store_error("open", options.path);
  }
}

bool opened_immutable(SQLite::Database& db) {
  // The name SQLite keeps for a database opened by URI carries the URI's
  // parameters, which sqlite3_uri_boolean reads back.
  const char* name = sqlite3_db_filename(db.getHandle(), "main");
  return name != nullptr && sqlite3_uri_boolean(name, "immutable", 0) != 0;
}

} // namespace outbox::storage::sqlite
