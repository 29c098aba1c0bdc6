#include "cli/keyspace_check.hpp"

#include "cli/common_options.hpp"
#include "cli/database_to_read.hpp"
#include "cli/startup_verdict.hpp"
#include "storage/db_folder.hpp"
#include "storage/store_error.hpp"

namespace outbox::cli {

std::optional<int> check_keyspace(storage::database& db,
                                  const config::settings& s,
                                  const std::string& command,
                                  keyspace_use use) {
  return tell_verdict(startup::check_keyspace(db, s, use), command);
}

std::optional<int> check_keyspace_if_database(const config::settings& s,
                                              const std::string& command,
                                              keyspace_use use) {
  if (storage::database_file_missing(s.db))
    return std::nullopt;
  // A command that needs no database (dead-letters) opens it only to learn
  // its identity: read-only for a read, so a user who may only read it, or
  // a database of an older schema, still reaches Redis. Its replay writes
  // the keyspace and must stamp it, so that open is the usual one.
  if (use == keyspace_use::read) {
    std::unique_ptr<storage::database> db;
    try {
      db = open_existing_database_to_read(s.db);
    } catch (const storage::store_error&) {
      return std::nullopt;
    }
    return check_keyspace(*db, s, command, use);
  }
  auto db = open_existing_database(s.db);
  return check_keyspace(*db, s, command, use);
}

std::optional<int> check_lab_keyspace(const config::settings& s,
                                      const std::string& command) {
  return tell_verdict(startup::check_lab_keyspace(s), command);
}

} // namespace outbox::cli
