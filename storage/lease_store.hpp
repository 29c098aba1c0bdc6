#pragma once

// The lease protocol (docs/postgres-protocol.md) as the relays use it: claim,
// ack, renew, release, fail; whatever database holds the rows.

#include "storage/clock.hpp"
#include "storage/lease_policy.hpp"
#include "storage/lease_records.hpp"

#include <string>
#include <vector>

namespace outbox::storage {

/// The relay side of the outbox table. Every call is one short write
/// transaction; none is ever held across a broker call. Throws store_error.
///
/// The calls check what they are given here, the same on every backend
/// (claim_batch: an empty owner or a policy that cannot work; fail: the
/// policy; both refused with store_error(invalid_input). Every call given
/// no leases has nothing to do and does not ask the database), and leave
/// the rest to the backend's private functions of the same parameters.
class lease_store {
public:
  virtual ~lease_store() = default;

  /// Leases up to policy.batch rows that are PENDING and due, or SENDING with
  /// an expired lease. Head-of-line per aggregate: a row is taken only when
  /// every lower-seq row of its aggregate is PUBLISHED or in this claim.
  /// Attempts are counted here; a row already at max_attempts becomes FAILED.
  /// Looks at no more than claim_scan_bound(policy) candidates; once a walk
  /// is cut there, later claims of this store split the bound between the
  /// oldest candidates and the rows after the last one looked at.
  claim claim_batch(const std::string& owner, millis now,
                    const lease_policy& policy);

  /// Marks rows PUBLISHED where owner and epoch still match (fencing).
  ack_result ack(const std::string& owner,
                 const std::vector<event_lease>& leases, millis now);

  /// Hands unpublished leases back (PENDING, due now) on graceful shutdown;
  /// the attempt of the claim is refunded. Returns rows released.
  int release(const std::string& owner, const std::vector<event_lease>& leases);

  /// Extends held leases to `lease_until`. Returns rows still held.
  int renew(const std::string& owner, const std::vector<event_lease>& leases,
            millis lease_until);

  /// Records a publish error: back off exponentially, or FAILED at
  /// max_attempts. Only rows the owner still holds are touched.
  failure_result fail(const std::string& owner,
                      const std::vector<event_lease>& leases,
                      const std::string& error, millis now,
                      const lease_policy& policy);

private:
  // The backend's part of each call above, once its checks passed: owner
  // and policy are usable, `leases` is never empty.
  virtual claim claim_rows(const std::string& owner, millis now,
                           const lease_policy& policy) = 0;
  virtual ack_result ack_held(const std::string& owner,
                              const std::vector<event_lease>& leases,
                              millis now) = 0;
  virtual int release_held(const std::string& owner,
                           const std::vector<event_lease>& leases) = 0;
  virtual int renew_held(const std::string& owner,
                         const std::vector<event_lease>& leases,
                         millis lease_until) = 0;
  virtual failure_result fail_held(const std::string& owner,
                                   const std::vector<event_lease>& leases,
                                   const std::string& error, millis now,
                                   const lease_policy& policy) = 0;
};

} // namespace outbox::storage
