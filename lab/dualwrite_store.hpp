#pragma once

// The order store of the lab's dual-write demo: a SQLite file of its own
// holding a bare orders table and no outbox, so that an order committed here
// leaves no trace of the event it should have published. Never app.db.

#include "storage/sqlite_fwd.hpp"

#include <cstdint>
#include <memory>
#include <string>

namespace outbox::lab {

class dualwrite_store {
public:
  /// Opens nothing yet: the file at `path` is created on the first save.
  explicit dualwrite_store(std::string path);
  ~dualwrite_store();
  dualwrite_store(const dualwrite_store&) = delete;
  dualwrite_store& operator=(const dualwrite_store&) = delete;

  /// Creates the file (private, not through open_database: it is not an
  /// outbox database) and its table when needed, then inserts one order,
  /// committed on its own. Returns its id. Throws store_error.
  std::int64_t save_order(const std::string& sku, std::int64_t qty);

  /// COUNT(*) of its orders; after save_order. Throws store_error.
  std::int64_t count_orders();

private:
  std::string path_;
  std::unique_ptr<SQLite::Database> db_;
};

} // namespace outbox::lab
