#pragma once

#include "storage/lease_store.hpp"

#include <cstdint>
#include <map>
#include <string>

namespace outbox::storage::postgres {

class session;

/// The lease protocol on PostgreSQL (docs/postgres-protocol.md): one
/// statement per call, lease times from the database's clock (unless the
/// options ask for the caller's), fenced by (event_id, owner, epoch).
///
/// It remembers the rows its claims handed out until they are acked,
/// released, failed or rejected: when a claim's answer is lost with the
/// connection (the claim may have committed), the next call hands back
/// every row leased to this owner that it does not know, attempt refunded,
/// so a database outage charges no row an attempt.
class lease_store final : public storage::lease_store {
public:
  explicit lease_store(session& link) : link_(link) {}

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

  void recover_lost_claim();
  void forget(const std::vector<event_lease>& leases);

  session& link_;
  /// Where the next claim's walk starts (after this aggregate).
  std::string resume_after_;
  /// The ttl of the last claim: a renewal extends by it, from the
  /// database's clock.
  millis ttl_ = lease_policy{}.ttl;
  /// Rows handed out by this store's claims and not yet acked, released
  /// or failed: event_id -> the epoch of that claim.
  std::map<std::string, std::int64_t> held_;
  /// Owner of a claim whose answer was lost, "" when none.
  std::string lost_claim_owner_;
};

} // namespace outbox::storage::postgres
