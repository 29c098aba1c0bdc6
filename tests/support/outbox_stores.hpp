#pragma once

// The outbox table's stores of one database, through the interfaces every
// backend implements, as one object: a test claims, fails, counts and
// purges the same rows and reads better calling them all on one name (as
// outbox_tables does for SQLite's classes).

#include "storage/database.hpp"
#include "storage/lease_store.hpp"
#include "storage/outbox_views.hpp"
#include "storage/retention_store.hpp"

#include <memory>
#include <string>
#include <vector>

namespace outbox::test {

class outbox_stores {
public:
  explicit outbox_stores(storage::database& db)
      : leases_(db.leases()), views_(db.views()), retention_(db.retention()) {}

  storage::claim claim_batch(const std::string& owner, storage::millis now,
                             const storage::lease_policy& policy) {
    return leases_->claim_batch(owner, now, policy);
  }
  storage::ack_result ack(const std::string& owner,
                          const std::vector<storage::event_lease>& leases,
                          storage::millis now) {
    return leases_->ack(owner, leases, now);
  }
  int release(const std::string& owner,
              const std::vector<storage::event_lease>& leases) {
    return leases_->release(owner, leases);
  }
  int renew(const std::string& owner,
            const std::vector<storage::event_lease>& leases,
            storage::millis lease_until) {
    return leases_->renew(owner, leases, lease_until);
  }
  storage::failure_result fail(const std::string& owner,
                               const std::vector<storage::event_lease>& leases,
                               const std::string& error, storage::millis now,
                               const storage::lease_policy& policy) {
    return leases_->fail(owner, leases, error, now, policy);
  }

  std::vector<std::string> retry(const std::vector<std::string>& event_ids,
                                 storage::millis now) {
    return views_->retry(event_ids, now);
  }
  int retry_all_failed(storage::millis now) {
    return views_->retry_all_failed(now);
  }
  storage::outbox_stats stats(storage::millis now) {
    return views_->stats(now);
  }
  bool has_pending_or_sending() { return views_->has_pending_or_sending(); }
  storage::failed_page failed_rows(std::int64_t after_rowid, int limit) {
    return views_->failed_rows(after_rowid, limit);
  }

  storage::purge_batch purge_published(storage::millis cutoff,
                                       std::int64_t after_rowid, int limit) {
    return retention_->purge_published(cutoff, after_rowid, limit);
  }

private:
  std::unique_ptr<storage::lease_store> leases_;
  std::unique_ptr<storage::outbox_views> views_;
  std::unique_ptr<storage::retention_store> retention_;
};

} // namespace outbox::test
