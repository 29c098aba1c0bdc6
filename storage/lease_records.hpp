#pragma once

// What the lease protocol hands out and answers (docs/postgres-protocol.md,
// "Claim"): plain values, the same whatever database holds the rows.

#include "storage/clock.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace outbox::storage {

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
  /// The row's headers (a JSON object's text, "" for none).
  std::string headers = {};
};

/// A row handed to a relay by a claim.
struct claimed_event {
  std::string event_id;
  std::string aggregate_id;
  std::int64_t seq = 0;
  std::string event_type;
  /// JSON object text, as stored.
  std::string payload;
  /// The row's headers: a JSON object's text, "" for none.
  std::string headers;
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

} // namespace outbox::storage
