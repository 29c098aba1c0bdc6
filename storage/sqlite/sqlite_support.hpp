#pragma once

// Internal helpers shared by the store implementations; not part of the
// storage interface.

#include "storage/sqlite/database.hpp"
#include "storage/sqlite/sqlite_error.hpp"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Exception.h>
#include <SQLiteCpp/Statement.h>

#include <memory>
#include <string>

namespace outbox::storage::sqlite {

/// Resets a reused prepared statement when the scope ends, so that no
/// statement keeps a read snapshot open after its transaction (bindings are
/// kept; every use rebinds all parameters).
class statement_use {
public:
  explicit statement_use(SQLite::Statement& statement)
      : statement_(statement) {}
  ~statement_use() { statement_.tryReset(); }
  statement_use(const statement_use&) = delete;
  statement_use& operator=(const statement_use&) = delete;

  SQLite::Statement* operator->() { return &statement_; }
  SQLite::Statement& operator*() { return statement_; }

private:
  SQLite::Statement& statement_;
};

/// What a store's message says when its statements cannot be prepared:
/// the name the three outbox stores had as one class, so that message
/// reads as it always did.
inline constexpr const char* prepare_context = "outbox_store";

/// The file name SQLite reports for `db`, for error messages.
inline std::string database_name(const SQLite::Database& db) {
  return db.getFilename().empty() ? std::string{":memory:"} : db.getFilename();
}

/// A store's private state (`Impl`, built from the connection: its prepared
/// statements) on `db`, once `db` is known to hold the schema. Throws
/// store_error: schema when it does not, or what preparing failed with,
/// naming `context` and the file.
template <class Impl>
std::unique_ptr<Impl> prepare_store(SQLite::Database& db,
                                    const char* context = prepare_context) {
  require_schema(db);
  try {
    return std::make_unique<Impl>(db);
  } catch (const SQLite::Exception&) {
    rethrow_as_store_error(context, database_name(db));
  }
}

} // namespace outbox::storage::sqlite
