#pragma once

#include "storage/lease_store.hpp"
#include "storage/sqlite_fwd.hpp"

#include <memory>

namespace outbox::storage::sqlite {

/// The lease protocol on the SQLite outbox table. Prepares only the
/// statements of the protocol (claim and the fenced updates).
class lease_store : public storage::lease_store {
public:
  /// Prepares the store's statements on `db`, which must outlive the store
  /// and be used by one thread at a time. Throws store_error(schema) when
  /// the database is not initialised.
  explicit lease_store(SQLite::Database& db);
  ~lease_store() override;
  lease_store(const lease_store&) = delete;
  lease_store& operator=(const lease_store&) = delete;

private:
  claim claim_rows(const std::string& owner, millis now,
                   const lease_policy& policy) override;
  ack_result ack_held(const std::string& owner,
                      const std::vector<event_lease>& leases,
                      millis now) override;
  int release_held(const std::string& owner,
                   const std::vector<event_lease>& leases) override;
  int renew_held(const std::string& owner,
                 const std::vector<event_lease>& leases,
                 millis lease_until) override;
  failure_result fail_held(const std::string& owner,
                           const std::vector<event_lease>& leases,
                           const std::string& error, millis now,
                           const lease_policy& policy) override;

  struct impl;
  std::unique_ptr<impl> impl_;
};

} // namespace outbox::storage::sqlite
