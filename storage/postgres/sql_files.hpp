#pragma once

// The SQL files of storage/postgres, compiled in (cmake/EmbedText.cmake):
// the same text psql runs in the proofs is what the backend runs.

namespace outbox::storage::postgres::sql_files {

/// schema.sql: schema version 5, PostgreSQL's first, run in one
/// transaction by migrate() on a database without outbox's tables.
extern const char* const schema;
/// schema_v6.sql: version 5 -> 6, run by migrate() after schema.sql or on
/// a database at version 5, in the same transaction.
extern const char* const schema_v6;
/// schema_v7.sql: version 6 -> 7 (appends idempotent on their event_id),
/// run by migrate() after the earlier files or on a database at version 6.
extern const char* const schema_v7;
/// schema_v8.sql: version 7 -> 8 (events' headers), run by migrate()
/// after the earlier files or on a database at version 7.
extern const char* const schema_v8;
/// schema_v9.sql: version 8 -> 9 (claims that touch fewer indexes), run by
/// migrate() after the earlier files or on a database at version 8.
extern const char* const schema_v9;
/// schema_v10.sql: version 9 -> 10 (the claim time stored), run by
/// migrate() after the earlier files or on a database at version 9.
extern const char* const schema_v10;
/// protocol/*.sql, joined in the order of their numbers: every statement
/// of the stores, as PREPAREs, run once per connection.
extern const char* const protocol;
/// audit.sql: the audit's snapshots, run when an audit starts.
extern const char* const audit;
/// grants.sql: the least privileges of the writer, relay and consumer
/// roles (`outbox init --print-grants`); never run by outbox itself.
extern const char* const grants;

} // namespace outbox::storage::postgres::sql_files
