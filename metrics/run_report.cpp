#include "metrics/run_report.hpp"
#include "text/json_text.hpp"

#include <algorithm>
#include <vector>

namespace outbox::metrics {

namespace {

std::vector<std::string> violations_of(const run_outcome& o) {
  std::vector<std::string> broke;
  if (!o.failure.empty())
    broke.push_back(o.failure);
  // A service's stop does not depend on reading the stores: its figures
  // are its own, and what it committed stays committed.
  if (!o.final_state.trouble.empty() && o.audited)
    broke.push_back(unread_state_violation + o.final_state.trouble);
  if (o.audit)
    for (const auto& check : o.audit->checks)
      if (check.result == audit_check::state::failed)
        broke.push_back(check.name + ": " + check.detail);
  if (o.must_be_drained && o.final_state.pending + o.final_state.sending > 0)
    broke.push_back("not drained: " + std::to_string(o.final_state.pending) +
                    " PENDING, " + std::to_string(o.final_state.sending) +
                    " SENDING rows left");
  bool audit_ok = o.audit && o.audit->ok();
  if (o.audited && !audit_ok && broke.empty())
    broke.push_back("audit did not pass");
  return broke;
}

/// The verdict with its words as its JSON writes them (no byte that is not
/// UTF-8), as the rest of the report.
audit_verdict as_written(const audit_verdict& verdict) {
  auto v = verdict;
  for (auto& check : v.checks) {
    check.name = text::as_json_writes_it(check.name);
    check.detail = text::as_json_writes_it(check.detail);
  }
  v.by_type.clear();
  for (const auto& [type, figures] : verdict.by_type)
    v.by_type[text::as_json_writes_it(type)] = figures;
  return v;
}

/// Only what this process was to do: a writer-only run leaves the rows to
/// relays elsewhere, not undone.
left_undone undone_by(const run_outcome& o, const run_metrics& m) {
  left_undone undone;
  const auto& s = o.final_state;
  if (o.orders_target > 0)
    undone.orders_not_placed =
        std::max<std::int64_t>(o.orders_target - m.orders_placed.load(), 0);
  if (o.relays > 0)
    undone.rows_not_published = s.pending + s.sending;
  if (o.consumers > 0)
    undone.entries_not_consumed = s.queued + s.in_processing;
  return undone;
}

} // namespace

run_report run_report_of(const run_outcome& o, const run_metrics& m) {
  // Messages quote paths and Redis replies: the report holds them as its
  // JSON writes them, so its text and its JSON say the same.
  using text::as_json_writes_it;
  run_report r;
  r.violations = violations_of(o);
  r.ok = r.violations.empty();
  for (auto& v : r.violations)
    v = as_json_writes_it(v);
  r.role = as_json_writes_it(o.role);
  r.audited = o.audited;
  r.relays = o.relays;
  r.consumers = o.consumers;
  r.seconds = o.seconds;
  const auto& s = o.final_state;
  r.orders = s.orders;
  r.outbox_rows = s.outbox_rows;
  r.processed_unique = s.processed;
  r.duplicates_absorbed = s.duplicates;
  r.order_violations = s.order_violations;
  r.dead_lettered = s.dead_lettered;
  r.failed_rows = s.failed;
  r.pending_rows = s.pending;
  r.sending_rows = s.sending;
  r.final_state_error = as_json_writes_it(s.trouble);
  r.enqueued = m.enqueued.load();
  r.relay_restarts = m.relay_restarts.load();
  r.consumer_restarts = m.consumer_restarts.load();
  r.injected_crashes = m.injected_crashes.load();
  r.zombie_pauses = m.zombie_pauses.load();
  r.fenced_acks_rejected = m.fenced_acks_rejected.load();
  r.expired_leases_dropped = m.expired_leases_dropped.load();
  r.fenced_moves_refused = m.fenced_moves_refused.load();
  r.recovered_entries = m.recovered_entries.load();
  r.lease_takeovers = m.lease_takeovers.load();
  r.orders_placed = m.orders_placed.load();
  r.events_appended = m.events_appended.load();
  r.applied_here = m.applied.load();
  r.lost_commit_answers = {m.commits_unknown.load(),
                           m.unknown_found_committed.load(),
                           m.unknown_found_not_committed.load()};
  double seconds = o.seconds > 0 ? o.seconds : 1e-9;
  r.throughput = {r.orders_placed / seconds, r.enqueued / seconds,
                  r.applied_here / seconds};
  auto latency = m.commit_to_processed.summary();
  r.latency_ms = {latency.samples, latency.p50, latency.p95, latency.p99};
  if (o.audit)
    r.audit = as_written(*o.audit);
  r.interrupted = o.interrupted;
  r.orders_target = o.orders_target;
  r.stranded_leases = as_json_writes_it(o.stranded_leases);
  if (o.interrupted)
    r.undone = undone_by(o, m);
  return r;
}

std::string run_report_failure(const run_report& r) {
  const auto& broke = r.violations;
  bool unread_state = !r.final_state_error.empty();
  std::string line;
  if (unread_state && broke.size() == 1) {
    line = broke.front(); // "could not read the final state: ..."
  } else {
    line = "invariants violated";
    if (!broke.empty())
      line += ": " + broke.front();
    if (broke.size() > 1)
      line += " and " + std::to_string(broke.size() - 1) + " more";
    line += " (see \"violations\")";
  }
  if (unread_state)
    line += "; what the run committed stays committed: check it with "
            "`outbox verify`";
  // Rows a dead relay still leases look stuck to `outbox status`: say
  // they only wait for their lease.
  if (!r.stranded_leases.empty())
    line += "; " + r.stranded_leases;
  return line;
}

} // namespace outbox::metrics
