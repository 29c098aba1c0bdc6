#pragma once

// The SQL files of storage/postgres, compiled in (cmake/EmbedText.cmake):
// the same text psql runs in the proofs is what the backend runs.

namespace outbox::storage::postgres::sql_files {

/// schema.sql: schema version 1, run in one transaction by migrate().
extern const char* const schema;
/// protocol.sql: every statement of the stores, as PREPAREs, run once per
/// connection.
extern const char* const protocol;
/// audit.sql: the audit's snapshots, run when an audit starts.
extern const char* const audit;

} // namespace outbox::storage::postgres::sql_files
