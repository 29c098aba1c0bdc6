#pragma once

#include <memory>
#include <string>

namespace SQLite {
class Database;
}

namespace outbox::storage {

/// Where the database lives unless the user names a file: the one path
/// whose missing folder the writing commands create (storage/db_folder.hpp).
inline constexpr const char* default_db_path = "var/outbox.db";

/// How to open the SQLite file.
struct db_options {
  std::string path = default_db_path;
  /// How long a writer waits for another connection's lock before failing.
  int busy_timeout_ms = 5000;
  /// PRAGMA synchronous: "FULL" (durable across power loss, the default),
  /// "NORMAL" (WAL: durable across process crashes, may lose the last
  /// commits on power loss) or "OFF" (benchmarks only).
  std::string synchronous = "FULL";
  /// PRAGMA synchronous of the relays' connections. NORMAL loses nothing
  /// that matters: a relay's commits (claims, acks) lost to a power cut
  /// only make rows publish again, which the inbox absorbs; and the WAL is
  /// a log, so the next FULL commit (an order) makes every earlier relay
  /// commit durable with it, never a later one without an earlier one.
  std::string relay_synchronous = "NORMAL";

  /// These options as a relay opens them (synchronous = relay_synchronous).
  db_options for_relay() const {
    auto relay = *this;
    relay.synchronous = relay_synchronous;
    return relay;
  }
};

/// The schema version this binary writes (PRAGMA user_version).
inline constexpr int schema_version = 5;

/// Opens (creating if needed) the database and applies the connection
/// pragmas: WAL, busy_timeout, synchronous, foreign_keys. Does not migrate.
/// Throws store_error (io when the path is unusable).
std::unique_ptr<SQLite::Database> open_database(const db_options& options);

/// Opens an existing database read-only (SQLITE_OPEN_READONLY), for the
/// commands that only read it (status, verify, failed): they then work on a
/// file the user can read but not write. Never creates, never switches the
/// journal mode. A WAL database needs its -shm file: SQLite reads one that
/// exists even when the user cannot write it, and creates it where the
/// folder is writable; where it cannot be opened (a folder the user cannot
/// write, a -shm file it cannot read) and no -wal file has frames (nothing
/// waits to be checkpointed), the file is opened `immutable`, without the
/// shared memory and locks it cannot make.
/// Throws store_error (io when the file cannot be read).
std::unique_ptr<SQLite::Database>
open_database_to_read(const db_options& options);

/// True when `db` was opened `immutable`: SQLite then assumes the file
/// never changes, so a reader that stays open (status --watch) must open
/// it anew to see later commits.
bool opened_immutable(SQLite::Database& db);

/// Creates or upgrades the schema to `schema_version` in one transaction.
/// Idempotent. Throws store_error(schema) for a database newer than us.
void migrate(SQLite::Database& db);

/// Throws store_error(schema) unless the schema is exactly `schema_version`
/// (the database was never initialised, or belongs to a newer binary).
void require_schema(SQLite::Database& db);

/// Opens and migrates: what `outbox init` and the writer do.
std::unique_ptr<SQLite::Database> open_and_migrate(const db_options& options);

} // namespace outbox::storage
