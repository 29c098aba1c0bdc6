#pragma once

#include "storage/database.hpp"
#include "storage/sqlite_fwd.hpp"

#include <memory>

namespace outbox::storage::sqlite {

/// A storage::database on one SQLite connection: its stores share it.
class connection final : public storage::database {
public:
  explicit connection(std::unique_ptr<SQLite::Database> db);
  ~connection() override;

  std::unique_ptr<storage::order_store> orders() override;
  std::unique_ptr<storage::lease_store> leases() override;
  std::unique_ptr<storage::outbox_views> views() override;
  std::unique_ptr<storage::retention_store> retention() override;
  std::vector<publication>
  read_publications(const std::vector<applied_event>& events) override;
  /// nullptr: the audit joins SQLite in place.
  std::unique_ptr<ledger_source> ledger() override { return nullptr; }
  database_identity identity() override;
  int found_schema_version() override;
  void migrate() override;
  bool frozen() override;

  SQLite::Database& handle() { return *db_; }

private:
  std::unique_ptr<SQLite::Database> db_;
};

/// Opens a SQLite database as storage::connect does.
std::unique_ptr<storage::database> connect(const db_options& options,
                                           open_mode mode);

} // namespace outbox::storage::sqlite
