#pragma once

// The knobs of the lease protocol and the bounds derived from them: plain
// values the config reads and every backend applies the same way.

#include "storage/clock.hpp"

#include <cstdint>
#include <string>

namespace outbox::storage {

/// The knobs of the lease protocol (config section "lease").
struct lease_policy {
  /// How long a claim is valid; an expired lease is reclaimable by anyone.
  millis ttl = 10'000;
  /// At most this many rows per claim.
  int batch = 256;
  /// Claims after which a row that never got acknowledged becomes FAILED.
  int max_attempts = 8;
  /// Backoff after a publish error: base * 2^(attempts-1), capped at max.
  millis backoff_base = 100;
  millis backoff_max = 30'000;
};

/// How many candidate rows one claim looks at, at most: max(4 * batch,
/// 1024). Bounds a claim's cost when many rows wait behind other leases.
std::int64_t claim_scan_bound(const lease_policy& policy);

/// How many rows one purge batch looks at, at most: max(4 * limit, 1024), so
/// a stretch of rows it must keep never holds the write lock for long.
std::int64_t purge_scan_bound(int limit);

/// The backoff before the next attempt after `attempts` claims.
millis backoff_delay(int attempts, const lease_policy& policy);

namespace detail {

/// Throws store_error(invalid_input) for a policy that cannot work.
void check_policy(const lease_policy& policy);

/// Throws store_error(invalid_input) for an empty lease owner.
void check_owner(const std::string& owner);

/// Throws store_error(invalid_input) for a purge batch below 1.
void check_purge_limit(int limit);

} // namespace detail

} // namespace outbox::storage
