#pragma once

// The folder a database file goes in. The default database (var/outbox.db)
// is the one a new user never chose: the commands that write create its
// folder, so the README's first command works in a fresh clone whoever
// runs it. A folder the user named (--db, db.path) is theirs to create: a
// typo there must not silently start a second, empty database.

#include "storage/database.hpp"

namespace outbox::storage {

/// True when `options` is the default database (var/outbox.db).
bool is_default_database(const db_options& options);

/// True when `options` names a SQLite file that does not exist (a
/// PostgreSQL database is never missing here: connecting says so).
bool database_file_missing(const db_options& options);

/// Throws store_error(io) "no database at P (run `outbox init` first)"
/// when database_file_missing(): what the commands that only use an
/// existing database say before opening it.
void require_database_file(const db_options& options);

/// Makes sure the folder of `options.path` exists: created (0700, with its
/// missing parents) for the default database, else a store_error(io)
/// "cannot open database P: folder F does not exist" when it is missing.
/// What `init`, `place-order`, `run` and `bench` call before they write.
void prepare_database_folder(const db_options& options);

} // namespace outbox::storage
