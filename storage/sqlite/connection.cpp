#include "storage/sqlite/connection.hpp"

#include "storage/sqlite/database.hpp"
#include "storage/sqlite/lease_store.hpp"
#include "storage/sqlite/order_store.hpp"
#include "storage/sqlite/outbox_views.hpp"
#include "storage/sqlite/retention_store.hpp"
#include "storage/store_error.hpp"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Exception.h>

namespace outbox::storage::sqlite {

connection::connection(std::unique_ptr<SQLite::Database> db)
    : db_(std::move(db)) {}

connection::~connection() = default;

std::unique_ptr<storage::order_store> connection::orders() {
  return std::make_unique<sqlite::order_store>(*db_);
}

std::unique_ptr<storage::lease_store> connection::leases() {
  return std::make_unique<sqlite::lease_store>(*db_);
}

std::unique_ptr<storage::outbox_views> connection::views() {
  return std::make_unique<sqlite::outbox_views>(*db_);
}

std::unique_ptr<storage::retention_store> connection::retention() {
  return std::make_unique<sqlite::retention_store>(*db_);
}

std::vector<publication>
connection::read_publications(const std::vector<applied_event>& events) {
  return sqlite::read_publications(*db_, events);
}

database_identity connection::identity() {
  return read_identity(*db_);
}

int connection::found_schema_version() {
  // A file SQLite cannot read fails in migrate, with the store's message.
  try {
    return db_->execAndGet("PRAGMA user_version").getInt();
  } catch (const SQLite::Exception&) {
    return 0;
  }
}

void connection::migrate() {
  sqlite::migrate(*db_);
}

bool connection::frozen() {
  return opened_immutable(*db_);
}

std::unique_ptr<storage::database> connect(const db_options& options,
                                           open_mode mode) {
  auto db = mode == open_mode::migrated    ? open_and_migrate(options)
            : mode == open_mode::read_only ? open_database_to_read(options)
                                           : open_database(options);
  // A migrated database has the schema by now; as_is checks nothing (each
  // store checks it, or the caller migrates).
  if (mode == open_mode::existing || mode == open_mode::read_only)
    require_schema(*db);
  return std::make_unique<connection>(std::move(db));
}

SQLite::Database& connection_of(storage::database& db) {
  auto* ours = dynamic_cast<connection*>(&db);
  if (ours == nullptr)
    throw store_error(store_errc::internal,
                      "this database is not a SQLite database");
  return ours->handle();
}

} // namespace outbox::storage::sqlite
