#pragma once

#include "storage/retention_store.hpp"
#include "storage/sqlite_fwd.hpp"

#include <memory>

namespace outbox::storage::sqlite {

/// Purges the SQLite outbox table. Prepares only the statements of the
/// purge walk.
class retention_store : public storage::retention_store {
public:
  /// Prepares the store's statements on `db`, which must outlive the store
  /// and be used by one thread at a time. Throws store_error(schema) when
  /// the database is not initialised.
  explicit retention_store(SQLite::Database& db);
  ~retention_store() override;
  retention_store(const retention_store&) = delete;
  retention_store& operator=(const retention_store&) = delete;

  purge_batch purge_published(millis cutoff, std::int64_t after_rowid,
                              int limit) override;

private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

} // namespace outbox::storage::sqlite
