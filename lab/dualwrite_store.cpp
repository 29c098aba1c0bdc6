#include "lab/dualwrite_store.hpp"

#include "storage/private_files.hpp"
#include "storage/sqlite/sqlite_error.hpp"
#include "storage/store_error.hpp"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Exception.h>
#include <SQLiteCpp/Statement.h>

#include <stdexcept>
#include <utility>

namespace outbox::lab {

dualwrite_store::dualwrite_store(std::string path) : path_(std::move(path)) {}

dualwrite_store::~dualwrite_store() = default;

std::int64_t dualwrite_store::save_order(const std::string& sku,
                                         std::int64_t qty) {
  storage::create_private_file(path_);
  try {
    db_ = std::make_unique<SQLite::Database>(path_, SQLite::OPEN_READWRITE |
                                                        SQLite::OPEN_CREATE);
    db_->exec("CREATE TABLE IF NOT EXISTS orders ("
              "id INTEGER PRIMARY KEY, sku TEXT NOT NULL, qty INTEGER NOT "
              "NULL)");
    SQLite::Statement insert{*db_,
                             "INSERT INTO orders (sku, qty) VALUES (?, ?)"};
    insert.bind(1, sku);
    insert.bind(2, qty);
    insert.exec();
    return db_->getLastInsertRowid();
  } catch (const SQLite::Exception&) {
    storage::sqlite::rethrow_as_store_error("dual write: save order", path_);
  }
}

std::int64_t dualwrite_store::count_orders() {
  if (!db_)
    throw std::logic_error("dualwrite_store: count_orders before save_order");
  try {
    return db_->execAndGet("SELECT COUNT(*) FROM orders").getInt64();
  } catch (const SQLite::Exception&) {
    storage::sqlite::rethrow_as_store_error("dual write: count orders", path_);
  }
}

} // namespace outbox::lab
