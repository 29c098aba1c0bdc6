#pragma once

// PostgreSQL's errors as store_error: SQLSTATE classes to store_errc
// (docs/postgres-protocol.md, "Errors"), so the CLI's exit codes and the
// actors' outage rule work as on SQLite.

#include "storage/postgres/libpq_handles.hpp"
#include "storage/store_error.hpp"

#include <string>

namespace outbox::storage::postgres {

/// The store_errc for a SQLSTATE: busy for what passes by itself (a lost
/// or refused connection, a shutdown, a serialization failure, a deadlock,
/// a lock timeout, too many connections), schema for a database outbox did
/// not make, invalid_input for a broken rule of the data, io for being
/// refused (authentication, privileges, a read-only server), internal else.
store_errc classify(const std::string& sqlstate);

/// libpq's or the server's message on one line: its line breaks and tabs
/// (a message, then libpq's hint on the next line) become single spaces.
std::string one_line(const char* message);

/// Throws the store_error for a failed answer (or a broken connection:
/// busy), the message naming `context`, `where` and PostgreSQL's words.
[[noreturn]] void throw_failure(const char* context, const std::string& where,
                                PGconn* conn, const PGresult* answer);

/// Throws the store_error for a connection attempt that failed: io when the
/// server refused us (authentication, an unknown role or database), busy
/// when it could not be reached (it may come back).
[[noreturn]] void throw_connect_failure(const std::string& where, PGconn* conn);

} // namespace outbox::storage::postgres
