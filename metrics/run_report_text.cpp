// The human side of the run report: what `outbox run` prints without
// --json. Everything the JSON holds that an operator acts on, in sentences.

#include "metrics/run_report.hpp"
#include "text/plural.hpp"
#include "text/terminal_text.hpp"

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

namespace outbox::metrics {

namespace {

using text::plural;

/// One decimal: the precision these figures have on a shared machine.
std::string rounded(double x) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f", x);
  return buffer;
}

std::string latency_line(const run_report::percentiles& latency) {
  if (latency.samples == 0)
    return "n/a (no event processed by this process)";
  return "p50 " + rounded(latency.p50) + " ms, p95 " + rounded(latency.p95) +
         " ms, p99 " + rounded(latency.p99) + " ms (" +
         plural(latency.samples, "sample") + ")";
}

/// "7 checks passed", "5 of 7 checks passed, 1 failed, 1 skipped", then
/// one line per check that did not pass.
void audit_lines(std::ostream& out, const run_report& r) {
  if (!r.audited) {
    out << "audit: not run (a stopped service answers for itself; "
           "`outbox verify` audits the stores)\n";
    return;
  }
  if (!r.audit || r.audit->checks.empty()) {
    out << "audit: not run (the final state could not be read)\n";
    return;
  }
  const auto& checks = r.audit->checks;
  std::int64_t passed = 0, failed = 0, skipped = 0;
  for (const auto& check : checks)
    (check.result == audit_check::state::passed   ? passed
     : check.result == audit_check::state::failed ? failed
                                                  : skipped)++;
  auto total = static_cast<std::int64_t>(checks.size());
  out << "audit: ";
  if (passed == total)
    out << plural(total, "check") << " passed\n";
  else
    out << passed << " of " << plural(total, "check") << " passed"
        << (failed > 0 ? ", " + std::to_string(failed) + " failed" : "")
        << (skipped > 0 ? ", " + std::to_string(skipped) + " skipped" : "")
        << '\n';
  for (const auto& check : checks)
    if (check.result != audit_check::state::passed)
      out << "  " << result_name(check.result) << ' '
          << text::escaped(check.name) << ": " << text::escaped(check.detail)
          << '\n';
}

/// "917 of 2000 orders not placed, 1200 rows not published, ...".
std::string undone_text(const run_report& r) {
  if (!r.undone)
    return "";
  const auto& undone = *r.undone;
  std::vector<std::string> parts;
  if (undone.orders_not_placed)
    parts.push_back(std::to_string(*undone.orders_not_placed) + " of " +
                    plural(r.orders_target, "order") + " not placed");
  if (undone.rows_not_published)
    parts.push_back(plural(*undone.rows_not_published, "row") +
                    " not published");
  if (undone.entries_not_consumed)
    parts.push_back(plural(*undone.entries_not_consumed, "entry", "entries") +
                    " not consumed");
  std::string line;
  for (const auto& part : parts)
    line += (line.empty() ? "" : ", ") + part;
  return line.empty() ? "nothing" : line;
}

} // namespace

std::string run_report_text(const run_report& r) {
  std::ostringstream out;
  out << (r.role.empty() ? "run" : text::escaped(r.role)) << ' '
      << (!r.ok           ? "FAILED"
          : r.interrupted ? "INTERRUPTED"
                          : "OK")
      << " after " << rounded(r.seconds) << " s with "
      << plural(r.relays, "relay") << " and " << plural(r.consumers, "consumer")
      << '\n';

  // Only the parts that ran here: a relay's report has no orders/s.
  out << "this run (this process):\n";
  if (r.orders_target > 0 || r.orders_placed > 0)
    // Each order's OrderPlaced comes with it; events_appended counts the
    // follow-ups alone, so the events written are the sum.
    out << "  " << plural(r.orders_placed, "order") << " placed, "
        << plural(r.orders_placed + r.events_appended, "event") << " written ("
        << r.events_appended
        << " of them follow-ups): " << rounded(r.throughput.orders_per_s)
        << " orders/s\n";
  if (r.relays > 0)
    out << "  " << plural(r.enqueued, "event") << " enqueued by its relays: "
        << rounded(r.throughput.events_enqueued_per_s) << " events/s\n";
  if (r.consumers > 0)
    out << "  " << plural(r.applied_here, "event")
        << " applied by its consumers: "
        << rounded(r.throughput.events_processed_per_s)
        << " events/s; commit-to-processed latency "
        << latency_line(r.latency_ms) << '\n';
  if (const auto& lost = r.lost_commit_answers; lost.requests > 0)
    out << "  COMMIT answers lost with the connection: "
        << plural(lost.requests, "request") << "; found "
        << lost.found_committed << " committed, " << lost.found_not_committed
        << " not committed (by lookup or by their retry)\n";
  out << "  injected faults: " << plural(r.injected_crashes, "crash", "crashes")
      << ", " << plural(r.zombie_pauses, "zombie pause") << "; restarted "
      << plural(r.relay_restarts, "relay") << ", "
      << plural(r.consumer_restarts, "consumer") << '\n'
      << "  leases: " << r.lease_takeovers << " taken over, "
      << plural(r.fenced_acks_rejected, "fenced ack") << " rejected, "
      << r.expired_leases_dropped << " expired before publishing; "
      << plural(r.recovered_entries, "in-flight entry", "in-flight entries")
      << " recovered, "
      << plural(r.fenced_moves_refused, "fenced consumer move") << " refused\n";

  out << "store-wide (every process sharing the database and Redis):\n";
  if (!r.final_state_error.empty())
    out << "  not read: " << text::escaped(r.final_state_error) << '\n';
  else
    out << "  " << plural(r.orders, "order") << ", "
        << plural(r.outbox_rows, "outbox row") << ": "
        << r.outbox_rows - r.pending_rows - r.sending_rows - r.failed_rows
        << " published, " << r.pending_rows << " PENDING, " << r.sending_rows
        << " SENDING, " << r.failed_rows << " FAILED\n"
        << "  " << plural(r.processed_unique, "event") << " processed once, "
        << plural(r.duplicates_absorbed, "duplicate") << " absorbed, "
        << r.dead_lettered << " dead-lettered, "
        << plural(r.order_violations, "order violation") << '\n';
  audit_lines(out, r);

  if (r.interrupted)
    out << "left undone: " << undone_text(r) << '\n';
  if (!r.stranded_leases.empty())
    out << "note: " << text::escaped(r.stranded_leases) << '\n';
  for (const auto& v : r.violations)
    out << "VIOLATED: " << text::escaped(v) << '\n';
  return out.str();
}

std::string run_report_interruption(const run_report& r) {
  if (!r.interrupted)
    return "";
  return "interrupted before the run drained; left undone: " + undone_text(r);
}

} // namespace outbox::metrics
