#pragma once

// The SQLite stores of the outbox table over one connection, as one
// object: a test claims, fails, counts and purges the same rows, and reads
// better calling them all on one name.

#include "storage/sqlite/lease_store.hpp"
#include "storage/sqlite/outbox_views.hpp"
#include "storage/sqlite/retention_store.hpp"

namespace outbox::test {

class outbox_tables : public storage::sqlite::lease_store,
                      public storage::sqlite::outbox_views,
                      public storage::sqlite::retention_store {
public:
  explicit outbox_tables(SQLite::Database& db)
      : storage::sqlite::lease_store(db), storage::sqlite::outbox_views(db),
        storage::sqlite::retention_store(db) {}
};

} // namespace outbox::test
