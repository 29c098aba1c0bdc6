#include "storage/postgres/lease_store.hpp"

#include "storage/postgres/arrays.hpp"
#include "storage/postgres/session.hpp"
#include "storage/store_error.hpp"
#include "storage/types.hpp"

#include <set>

namespace outbox::storage::postgres {

namespace {

/// The claim statement's columns (protocol/2_claim.sql).
enum claim_column {
  scanned,
  resume_after,
  lease_until,
  row_id,
  event_id,
  aggregate_id,
  seq,
  event_type,
  payload,
  epoch,
  attempts,
  created_at,
  given_up,
  taken_over,
  previous_owner,
  last_error,
  headers
};

} // namespace

void lease_store::recover_lost_claim() {
  if (lost_claim_owner_.empty())
    return;
  std::vector<std::string> known;
  known.reserve(held_.size());
  for (const auto& row : held_)
    known.push_back(row.first);
  link_.run("claim recovery", "release_unknown",
            {lost_claim_owner_, text_array(known)});
  lost_claim_owner_.clear();
}

void lease_store::forget(const std::vector<event_lease>& leases) {
  for (const auto& lease : leases)
    // Only that claim's: an older epoch's answer leaves a newer lease.
    if (auto row = held_.find(lease.event_id);
        row != held_.end() && row->second == lease.epoch)
      held_.erase(row);
}

claim lease_store::claim_rows(const std::string& owner, millis now,
                              const lease_policy& policy) {
  recover_lost_claim();
  ttl_ = policy.ttl;
  auto bound = claim_scan_bound(policy);
  result rows;
  try {
    rows = link_.run("claim", "claim",
                     {owner, link_.time(now), std::to_string(policy.ttl),
                      std::to_string(policy.batch), std::to_string(bound),
                      resume_after_, std::to_string(policy.max_attempts)});
  } catch (const store_error& e) {
    // Lost with the connection: it may have committed. The next call
    // hands back what it leased to us.
    if (e.code() == store_errc::busy)
      lost_claim_owner_ = owner;
    throw;
  }
  claim c;
  c.owner = owner;
  if (rows.rows() == 0)
    return c;
  c.scanned = rows.int64(0, scanned);
  c.more_candidates = c.scanned >= bound;
  resume_after_ = rows.text(0, resume_after);
  c.lease_until = rows.int64(0, lease_until);
  for (int r = 0; r < rows.rows(); ++r) {
    if (rows.null(r, event_id))
      continue;
    if (rows.boolean(r, given_up)) {
      ++c.failed;
      c.given_up.push_back({rows.text(r, event_id), rows.text(r, aggregate_id),
                            rows.int64(r, seq), rows.text(r, event_type),
                            static_cast<int>(rows.int64(r, attempts)),
                            rows.text(r, last_error), rows.text(r, headers)});
      continue;
    }
    claimed_event e;
    e.event_id = rows.text(r, event_id);
    e.aggregate_id = rows.text(r, aggregate_id);
    e.seq = rows.int64(r, seq);
    e.event_type = rows.text(r, event_type);
    e.payload = rows.text(r, payload);
    e.headers = rows.text(r, headers);
    e.epoch = rows.int64(r, epoch);
    e.attempts = static_cast<int>(rows.int64(r, attempts));
    e.created_at = rows.int64(r, created_at);
    e.taken_over = rows.boolean(r, taken_over);
    e.rowid = rows.int64(r, row_id);
    e.previous_owner = rows.text(r, previous_owner);
    if (e.taken_over)
      ++c.taken_over;
    held_[e.event_id] = e.epoch;
    c.events.push_back(std::move(e));
  }
  return c;
}

ack_result lease_store::ack_held(const std::string& owner,
                                 const std::vector<event_lease>& leases,
                                 millis now) {
  ack_result outcome;
  recover_lost_claim();
  auto arrays = to_arrays(leases);
  auto done = link_.run(
      "ack", "ack", {owner, arrays.event_ids, arrays.epochs, link_.time(now)});
  std::set<std::string> acked;
  for (int r = 0; r < done.rows(); ++r)
    acked.insert(done.text(r, 0));
  outcome.acked = static_cast<int>(acked.size());
  for (const auto& lease : leases)
    if (acked.count(lease.event_id) == 0)
      outcome.rejected.push_back(lease.event_id);
  forget(leases);
  return outcome;
}

int lease_store::release_held(const std::string& owner,
                              const std::vector<event_lease>& leases) {
  recover_lost_claim();
  auto arrays = to_arrays(leases);
  auto done =
      link_.run("release", "release", {owner, arrays.event_ids, arrays.epochs});
  forget(leases);
  return done.rows();
}

int lease_store::renew_held(const std::string& owner,
                            const std::vector<event_lease>& leases,
                            millis lease_until) {
  recover_lost_claim();
  auto arrays = to_arrays(leases);
  // On the database's clock a renewal lasts the claim's ttl from now; on
  // the caller's it ends where the caller says (ttl 0 from lease_until).
  auto caller = link_.caller_clock();
  auto done = link_.run("renew", "renew",
                        {owner, arrays.event_ids, arrays.epochs,
                         caller ? link_.time(lease_until) : std::nullopt,
                         std::to_string(caller ? 0 : ttl_)});
  // A lease not renewed was taken over: the relay drops its row, which is
  // then no longer this store's to know of (held_ would only grow).
  std::set<std::string> renewed;
  for (int r = 0; r < done.rows(); ++r)
    renewed.insert(done.text(r, 0));
  std::vector<event_lease> lost;
  for (const auto& lease : leases)
    if (renewed.count(lease.event_id) == 0)
      lost.push_back(lease);
  forget(lost);
  return done.rows();
}

failure_result lease_store::fail_held(const std::string& owner,
                                      const std::vector<event_lease>& leases,
                                      const std::string& error, millis now,
                                      const lease_policy& policy) {
  failure_result outcome;
  recover_lost_claim();
  // The backoff rule stays in lease_policy.cpp: the statement picks the
  // delay for a row's attempts from this list, and the last one for any
  // attempt past its end. The delays double until they stop changing (at
  // the cap, or 0), so the list ends there: some 64 entries at most,
  // however large max_attempts is.
  std::vector<std::int64_t> delays;
  for (int a = 1; a <= policy.max_attempts; ++a) {
    auto delay = backoff_delay(a, policy);
    if (!delays.empty() && delay == delays.back())
      break;
    delays.push_back(delay);
  }
  auto arrays = to_arrays(leases);
  auto done =
      link_.run("fail", "fail",
                {owner, arrays.event_ids, arrays.epochs, error, link_.time(now),
                 std::to_string(policy.max_attempts), integer_array(delays)});
  for (int r = 0; r < done.rows(); ++r) {
    if (row_status_of(done.text(r, 1)) == row_status::failed) {
      ++outcome.failed;
      outcome.failed_event_ids.push_back(done.text(r, 0));
    } else {
      ++outcome.backed_off;
    }
  }
  outcome.not_held =
      static_cast<int>(leases.size()) - outcome.failed - outcome.backed_off;
  forget(leases);
  return outcome;
}

} // namespace outbox::storage::postgres
