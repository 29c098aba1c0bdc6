#pragma once

// The knobs of the lease protocol and the bounds derived from them: plain
// values the config reads and every backend applies the same way.

#include "storage/clock.hpp"

#include <algorithm>
#include <cstdint>
#include <string>

namespace outbox::storage {

/// The knobs of the lease protocol (config section "lease"), and every
/// time derived from the ttl, each written once here: lease.ttl_ms is the
/// one knob behind all of them, so they move together when it changes.
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

  /// Where a lease taken or renewed at `from` ends.
  millis lease_until(millis from) const { return from + ttl; }

  /// Whether a batch held this long since its claim, by the relay's own
  /// monotonic clock, may be another relay's by now: then it is not pushed.
  bool ran_out(millis held) const { return held >= ttl; }

  /// A relay renews its batch's lease before the broker call once less
  /// than this is left (a third): enough for one push to go through
  /// before another relay may take the rows over.
  millis renew_before() const { return ttl / 3; }

  /// Whether a batch held this long since its claim is renewed now.
  bool renewal_due(millis held) const { return ttl - held < renew_before(); }

  /// The longest wait for a push's replicas (redis.replica_ack_timeout_ms)
  /// that stays below a third of the lease: a relay waiting longer would
  /// outwait the renewal and lose its rows to a takeover.
  millis longest_replica_wait() const { return (ttl - 1) / 3; }

  /// The ttl of the consumers' lock, renewed by the coordinator at every
  /// check: a standby takes over a dead holder's consumers in the time a
  /// relay takes over a dead relay's rows.
  millis lock_ttl() const { return ttl; }

  /// How long a process's relay heartbeat holds, noted every
  /// `note_interval`: at least a lease, and a few notes whatever the lease,
  /// so that a short lease does not make a live process look silent
  /// between two notes.
  millis heartbeat_ttl(millis note_interval) const {
    return std::max<millis>(ttl, 3 * note_interval);
  }

  /// How long a bounded run may see nothing move before it calls that a
  /// stall (before the idle poll's slack): a dead relay's rows wait a
  /// lease to be taken over and a second one to be published, a
  /// backed-off row up to the longest backoff.
  millis stall_after() const { return std::max<millis>(2 * ttl, backoff_max); }

  /// A pause sure to outlast the lease (half a lease more): what the
  /// injected relay pause (crash.relay_pause) freezes a relay for.
  millis past_lease_pause() const { return ttl * 3 / 2; }

  /// The youngest a dedup record may be to be trimmed (ms): a relay that
  /// lost its lease may still be about to publish a row it claimed, so no
  /// record younger than every lease a row can go through (ttl x
  /// max_attempts).
  millis redelivery_window() const { return ttl * max_attempts; }
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
