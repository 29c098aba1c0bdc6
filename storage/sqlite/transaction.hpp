#pragma once

// The one way a SQLite store runs a transaction: every store call is one
// transaction that commits or rolls back as a whole, and leaves with a
// store_error naming the call and the file, never an SQLiteCpp exception.

#include "storage/sqlite/sqlite_error.hpp"
#include "storage/store_error.hpp"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Exception.h>
#include <SQLiteCpp/Transaction.h>

#include <string>
#include <type_traits>
#include <utility>

namespace outbox::storage::sqlite {

/// Runs `work` in a transaction of `behavior` and commits it, returning what
/// `work` returns. A SQLite error in `work` or at COMMIT rolls back and is
/// rethrown as store_error(context, database); any other exception rolls
/// back and passes through unchanged.
template <class Work>
auto in_transaction(SQLite::Database& db, SQLite::TransactionBehavior behavior,
                    const char* context, const std::string& database,
                    Work&& work) -> decltype(work()) {
  try {
    SQLite::Transaction transaction(db, behavior);
    if constexpr (std::is_void_v<decltype(work())>) {
      work();
      transaction.commit();
    } else {
      auto result = work();
      transaction.commit();
      return result;
    }
  } catch (const SQLite::Exception&) {
    rethrow_as_store_error(context, database);
  }
}

/// A write transaction: BEGIN IMMEDIATE takes the write lock up front, so a
/// store call never fails half-way on a lock another writer took first.
template <class Work>
auto write_transaction(SQLite::Database& db, const char* context,
                       const std::string& database, Work&& work)
    -> decltype(work()) {
  return in_transaction(db, SQLite::TransactionBehavior::IMMEDIATE, context,
                        database, std::forward<Work>(work));
}

} // namespace outbox::storage::sqlite
