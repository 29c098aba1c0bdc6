#include "storage/lease_policy.hpp"

#include "storage/store_error.hpp"

#include <algorithm>
#include <string>

namespace outbox::storage {

std::int64_t claim_scan_bound(const lease_policy& policy) {
  return std::max<std::int64_t>(4 * std::int64_t{policy.batch}, 1024);
}

std::int64_t purge_scan_bound(int limit) {
  return std::max<std::int64_t>(4 * static_cast<std::int64_t>(limit), 1024);
}

millis backoff_delay(int attempts, const lease_policy& policy) {
  auto cap = std::max<millis>(policy.backoff_max, 0);
  auto delay = std::min(std::max<millis>(policy.backoff_base, 0), cap);
  // Doubling stops at the cap, so this never overflows and runs at most ~63
  // times whatever `attempts` is.
  for (int i = 1; i < attempts && delay > 0 && delay < cap; ++i)
    delay = delay > cap / 2 ? cap : delay * 2;
  return delay;
}

void detail::check_policy(const lease_policy& policy) {
  auto bad = [](const std::string& what) {
    throw store_error(store_errc::invalid_input, "lease policy: " + what);
  };
  if (policy.ttl < 1)
    bad("ttl must be at least 1 ms (got " + std::to_string(policy.ttl) + ")");
  if (policy.batch < 1)
    bad("batch must be at least 1 (got " + std::to_string(policy.batch) + ")");
  if (policy.max_attempts < 1)
    bad("max_attempts must be at least 1 (got " +
        std::to_string(policy.max_attempts) + ")");
  if (policy.backoff_base < 0 || policy.backoff_max < 0)
    bad("backoff_base and backoff_max must not be negative");
}

void detail::check_owner(const std::string& owner) {
  if (owner.empty())
    throw store_error(store_errc::invalid_input, "owner must not be empty");
}

void detail::check_purge_limit(int limit) {
  if (limit < 1)
    throw store_error(store_errc::invalid_input,
                      "purge: batch must be at least 1 (got " +
                          std::to_string(limit) + ")");
}

} // namespace outbox::storage
