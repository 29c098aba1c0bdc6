#include "storage/sqlite/sqlite_error.hpp"

#include <SQLiteCpp/Exception.h>
#include <sqlite3.h>

#include <new>

namespace outbox::storage::sqlite {

namespace {

store_errc classify(int primary_code) {
  switch (primary_code) {
  case SQLITE_BUSY:
  case SQLITE_LOCKED:
    return store_errc::busy;
  case SQLITE_CANTOPEN:
  case SQLITE_IOERR:
  case SQLITE_READONLY:
  case SQLITE_FULL:
  case SQLITE_PERM:
  case SQLITE_AUTH:
    return store_errc::io;
  case SQLITE_NOTADB:
  case SQLITE_CORRUPT:
    return store_errc::schema;
  case SQLITE_CONSTRAINT:
  case SQLITE_TOOBIG:
  case SQLITE_MISMATCH:
    return store_errc::invalid_input;
  default:
    return store_errc::internal;
  }
}

[[noreturn]] void throw_mapped(const SQLite::Exception& e, const char* context,
                               const std::string* database) {
  // SQLiteCpp reports its own misuse with code -1; the primary SQLite code is
  // the low byte of the extended one.
  int code = e.getErrorCode();
  if (code < 0 && e.getExtendedErrorCode() >= 0)
    code = e.getExtendedErrorCode() & 0xff;
  auto errc = classify(code & 0xff);
  std::string name = database && !database->empty()
                         ? "database " + *database
                         : std::string{"the database"};
  std::string msg = std::string{context} + ": ";
  switch (errc) {
  case store_errc::busy:
    msg += name +
           " is locked by another connection (busy_timeout "
           "exceeded): " +
           e.what();
    break;
  case store_errc::io:
    msg += "cannot open or write " + name + ": " + e.what();
    break;
  case store_errc::schema:
    msg += name + " is not an outbox database: " + e.what();
    break;
  case store_errc::invalid_input:
    msg += e.what();
    break;
  case store_errc::internal:
  case store_errc::outcome_unknown: // SQLite knows its commits' outcome
    msg += "SQLite error " + std::to_string(e.getExtendedErrorCode()) + " on " +
           name + ": " + e.what();
    break;
  }
  throw store_error(errc, msg);
}

[[noreturn]] void rethrow_impl(const char* context,
                               const std::string* database) {
  try {
    throw;
  } catch (const store_error&) {
    throw;
  } catch (const SQLite::Exception& e) {
    throw_mapped(e, context, database);
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception& e) {
    throw store_error(store_errc::internal,
                      std::string{context} + ": " + e.what());
  }
}

} // namespace

void rethrow_as_store_error(const char* context) {
  rethrow_impl(context, nullptr);
}

void rethrow_as_store_error(const char* context, const std::string& database) {
  rethrow_impl(context, &database);
}

} // namespace outbox::storage::sqlite
