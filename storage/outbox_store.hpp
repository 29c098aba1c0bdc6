#pragma once

#include "storage/types.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace SQLite {
class Database;
}

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

/// The lease on one row: who may acknowledge it (owner) and which claim of
/// the row it is (epoch, bumped by every claim).
struct event_lease {
  std::string event_id;
  std::int64_t epoch = 0;
  /// Where the row lives (its SQLite rowid), filled by claim::leases(): a
  /// lookup hint only, 0 when unknown. The fence is always event_id, owner
  /// and epoch; a wrong hint falls back to the event_id lookup.
  std::int64_t rowid = 0;
};

/// A FAILED row, for `outbox status`, `outbox failed` and the
/// relay's log line about it.
struct failed_row {
  std::string event_id;
  std::string aggregate_id;
  std::int64_t seq = 0;
  std::string event_type;
  int attempts = 0;
  std::string last_error;
};

/// A row handed to a relay by a claim.
struct claimed_event {
  std::string event_id;
  std::string aggregate_id;
  std::int64_t seq = 0;
  std::string event_type;
  /// JSON object text, as stored.
  std::string payload;
  std::int64_t epoch = 0;
  int attempts = 0;
  millis created_at = 0;
  /// True when the row was SENDING under another owner's expired lease.
  bool taken_over = false;
  /// The row's SQLite rowid (see event_lease::rowid).
  std::int64_t rowid = 0;
  /// For a taken-over row: whose lease expired (read with the row, so the
  /// takeover line can name the relay that went away).
  std::string previous_owner;
};

/// The result of one claim: rows in publish order (per aggregate by seq).
struct claim {
  std::string owner;
  millis lease_until = 0;
  std::vector<claimed_event> events;
  /// Rows of expired leases that this claim took over.
  int taken_over = 0;
  /// Rows that reached max_attempts while leased and became FAILED here.
  int failed = 0;
  /// The claim stopped at its bound on candidates looked at, before it saw
  /// them all: more rows may be claimable now, so claim again soon rather
  /// than back off.
  bool more_candidates = false;
  /// Candidate rows the claim looked at (at most claim_scan_bound).
  std::int64_t scanned = 0;
  /// The rows that became FAILED here, last_error saying why (for the log).
  std::vector<failed_row> given_up;

  std::vector<event_lease> leases() const;
};

/// What a fenced acknowledgement did.
struct ack_result {
  /// Rows now PUBLISHED.
  int acked = 0;
  /// Rows this owner no longer holds (lease expired and taken over): the
  /// ack was rejected for them. A relay counts and logs these, then moves on.
  std::vector<std::string> rejected;
};

/// What a publish failure did to the claimed rows.
struct failure_result {
  /// Rows put back to PENDING with a backoff.
  int backed_off = 0;
  /// Rows that reached max_attempts and are now FAILED.
  int failed = 0;
  /// Rows this owner no longer held: nothing changed for them.
  int not_held = 0;
  /// The event_ids of the rows now FAILED (for the log).
  std::vector<std::string> failed_event_ids;
};

/// One page of FAILED rows, oldest first (see outbox_store::failed_rows).
struct failed_page {
  std::vector<failed_row> rows;
  /// The rowid of the last row: pass it to get the next page.
  std::int64_t last_rowid = 0;
};

/// What one purge batch did, and where the next one starts.
struct purge_batch {
  /// PUBLISHED rows deleted (at most the batch limit).
  int deleted = 0;
  /// request_keys rows deleted with them.
  int request_keys = 0;
  /// Deleted rows that were the newest of their aggregate: their seq was
  /// saved in aggregate_heads, where seq allocation continues from it (it
  /// must not restart at 1, or the consumers would see the aggregate's next
  /// event out of order).
  int aggregate_heads = 0;
  /// The next batch starts after this rowid.
  std::int64_t last_rowid = 0;
  /// The walk reached the end of the table, or the first row created at or
  /// after the cutoff (published after it too): nothing is left to purge.
  bool done = false;
};

/// Leases currently held by one owner.
struct owner_leases {
  std::string owner;
  int rows = 0;
  /// Earliest lease_until among them.
  millis earliest_expiry = 0;
  /// Latest lease_until among them: the newest claim or renewal was
  /// lease.ttl_ms before it.
  millis latest_expiry = 0;
};

/// Counts and ages for `outbox status` and the metrics.
struct outbox_stats {
  std::map<std::string, std::int64_t> by_status; // all four, zero included
  std::int64_t orders = 0;
  /// Age of the oldest PENDING or SENDING row (0 when none).
  millis oldest_unpublished_age = 0;
  /// SENDING rows whose lease has expired (awaiting takeover).
  std::int64_t expired_leases = 0;
  std::vector<owner_leases> leases;
  std::vector<failed_row> failed; // at most 100, oldest first

  /// Rows in `status` (status::pending...); 0 for one no row is in.
  std::int64_t count(const std::string& status) const {
    auto found = by_status.find(status);
    return found == by_status.end() ? 0 : found->second;
  }
};

/// The relay side of the outbox table: the lease protocol of DESIGN.md.
/// Every method is one short BEGIN IMMEDIATE transaction; none is ever held
/// across a broker call. Throws store_error.
class outbox_store {
public:
  /// Prepares the store's statements on `db`, which must outlive the store
  /// and be used by one thread at a time. Throws store_error(schema) when
  /// the database is not initialised.
  explicit outbox_store(SQLite::Database& db);
  ~outbox_store();
  outbox_store(const outbox_store&) = delete;
  outbox_store& operator=(const outbox_store&) = delete;

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

  /// FAILED -> PENDING (attempts reset, due now) for these event_ids.
  /// Returns the ids that were not FAILED rows (unknown or other status).
  std::vector<std::string> retry(const std::vector<std::string>& event_ids,
                                 millis now);

  /// FAILED -> PENDING for every FAILED row. Returns rows retried.
  int retry_all_failed(millis now);

  outbox_stats stats(millis now);

  /// Up to `limit` FAILED rows with a rowid above `after_rowid`, oldest first,
  /// through the outbox_failed index: `outbox failed` pages through all of
  /// them (stats() shows only the first 100). A page shorter than `limit` is
  /// the last one.
  failed_page failed_rows(std::int64_t after_rowid, int limit);

  /// Deletes up to `limit` PUBLISHED rows published before `cutoff`, in rowid
  /// order after `after_rowid`, with their request_keys rows, in one short
  /// BEGIN IMMEDIATE transaction that looks at no more than
  /// purge_scan_bound(limit) rows. PENDING, SENDING and FAILED rows and the
  /// orders are never deleted; an aggregate's newest row leaves its seq in
  /// aggregate_heads. Call again from last_rowid until done.
  purge_batch purge_published(millis cutoff, std::int64_t after_rowid,
                              int limit);

private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

/// How many candidate rows one claim looks at, at most: max(4 * batch,
/// 1024). Bounds a claim's cost when many rows wait behind other leases.
std::int64_t claim_scan_bound(const lease_policy& policy);

/// How many rows one purge batch looks at, at most: max(4 * limit, 1024), so
/// a stretch of rows it must keep never holds the write lock for long.
std::int64_t purge_scan_bound(int limit);

/// The backoff before the next attempt after `attempts` claims.
millis backoff_delay(int attempts, const lease_policy& policy);

} // namespace outbox::storage
