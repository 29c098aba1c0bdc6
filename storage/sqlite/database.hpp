#pragma once

#include "storage/database.hpp"
#include "storage/sqlite_fwd.hpp"

#include <memory>
#include <string>
#include <vector>

namespace outbox::storage::sqlite {

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

/// Reads the identity of an initialised database (schema 5 or later).
/// Throws store_error.
database_identity read_identity(SQLite::Database& db);

/// The publication of each event, in order, read in one snapshot; the same
/// rule for "purged" as `outbox verify`'s.
std::vector<publication>
read_publications(SQLite::Database& db,
                  const std::vector<applied_event>& events);

/// The SQLite connection behind a database connect() opened, for the few
/// callers that need raw SQL on it (the audit's TEMP tables). Throws
/// store_error(internal) for a database of another backend.
SQLite::Database& connection_of(storage::database& db);

} // namespace outbox::storage::sqlite
