#include "storage/sqlite/database.hpp"

#include "storage/sqlite/sqlite_error.hpp"
#include "storage/sqlite/sqlite_support.hpp"
#include "storage/store_error.hpp"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Exception.h>
#include <SQLiteCpp/Statement.h>

#include <filesystem>

namespace outbox::storage::sqlite {

database_identity read_identity(SQLite::Database& db) {
  auto name = database_name(db);
  try {
    SQLite::Statement query{
        db,
        "SELECT id, first_schema FROM database_identity WHERE singleton = 1"};
    if (!query.executeStep())
      throw store_error(store_errc::schema, "database " + name +
                                                " has no identity: run `outbox "
                                                "init` to upgrade it");
    database_identity identity;
    identity.id = query.getColumn(0).getString();
    identity.first_schema = query.getColumn(1).getInt();
    std::error_code ec;
    auto absolute = std::filesystem::absolute(name, ec);
    identity.path = ec ? name : absolute.lexically_normal().string();
    return identity;
  } catch (const SQLite::Exception&) {
    rethrow_as_store_error("read_identity", name);
  }
}

} // namespace outbox::storage::sqlite
