#include "storage/lease_store.hpp"

namespace outbox::storage {

claim lease_store::claim_batch(const std::string& owner, millis now,
                               const lease_policy& policy) {
  detail::check_owner(owner);
  detail::check_policy(policy);
  return claim_rows(owner, now, policy);
}

ack_result lease_store::ack(const std::string& owner,
                            const std::vector<event_lease>& leases,
                            millis now) {
  if (leases.empty())
    return {};
  return ack_held(owner, leases, now);
}

int lease_store::release(const std::string& owner,
                         const std::vector<event_lease>& leases) {
  if (leases.empty())
    return 0;
  return release_held(owner, leases);
}

int lease_store::renew(const std::string& owner,
                       const std::vector<event_lease>& leases,
                       millis lease_until) {
  if (leases.empty())
    return 0;
  return renew_held(owner, leases, lease_until);
}

failure_result lease_store::fail(const std::string& owner,
                                 const std::vector<event_lease>& leases,
                                 const std::string& error, millis now,
                                 const lease_policy& policy) {
  detail::check_policy(policy);
  if (leases.empty())
    return {};
  return fail_held(owner, leases, error, now, policy);
}

} // namespace outbox::storage
