#pragma once

// storage::database on PostgreSQL: one session (one libpq connection)
// that every store made from it shares.

#include "storage/database.hpp"
#include "storage/postgres/session.hpp"

#include <memory>

namespace outbox::storage::postgres {

class connection final : public storage::database {
public:
  explicit connection(const db_options& options);
  ~connection() override;

  std::unique_ptr<storage::order_store> orders() override;
  std::unique_ptr<storage::lease_store> leases() override;
  std::unique_ptr<storage::outbox_views> views() override;
  std::unique_ptr<storage::retention_store> retention() override;
  std::vector<publication>
  read_publications(const std::vector<applied_event>& events) override;
  std::unique_ptr<storage::ledger_source> ledger() override;
  database_identity identity() override;
  int found_schema_version() override;
  void migrate() override;
  /// Never: every statement sees the latest commits.
  bool frozen() override { return false; }

  session& link() { return *session_; }

private:
  std::unique_ptr<session> session_;
};

/// Opens a PostgreSQL database as storage::connect does: read_only sets
/// default_transaction_read_only, the other modes as on SQLite.
std::unique_ptr<storage::database> connect(const db_options& options,
                                           open_mode mode);

} // namespace outbox::storage::postgres
