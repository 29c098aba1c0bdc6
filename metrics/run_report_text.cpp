// The human side of the run report: what `outbox run` prints without
// --json. Everything the JSON holds that an operator acts on, in sentences.

#include "metrics/run_report.hpp"
#include "text/plural.hpp"
#include "text/terminal_text.hpp"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

namespace outbox::metrics {

namespace {

using text::plural;

using json = nlohmann::json;

std::int64_t count_of(const json& r, const char* key) {
  auto i = r.find(key);
  return i != r.end() && i->is_number() ? i->get<std::int64_t>() : 0;
}

double number_of(const json& r, const char* key) {
  auto i = r.find(key);
  return i != r.end() && i->is_number() ? i->get<double>() : 0.0;
}

std::string string_of(const json& r, const char* key) {
  auto i = r.find(key);
  return i != r.end() && i->is_string() ? i->get<std::string>() : "";
}

/// One decimal: the precision these figures have on a shared machine.
std::string rounded(double x) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f", x);
  return buffer;
}

std::string latency_line(const json& latency) {
  if (count_of(latency, "samples") == 0)
    return "n/a (no event processed by this process)";
  return "p50 " + rounded(number_of(latency, "p50")) + " ms, p95 " +
         rounded(number_of(latency, "p95")) + " ms, p99 " +
         rounded(number_of(latency, "p99")) + " ms (" +
         plural(count_of(latency, "samples"), "sample") + ")";
}

/// "7 checks passed", "5 of 7 checks passed, 1 failed, 1 skipped", then
/// one line per check that did not pass.
void audit_lines(std::ostream& out, const json& r) {
  if (r.contains("audited") && r["audited"] == false) {
    out << "audit: not run (a stopped service answers for itself; "
           "`outbox verify` audits the stores)\n";
    return;
  }
  const json& audit = r.contains("audit") ? r["audit"] : json::object();
  auto checks = audit.find("checks");
  if (checks == audit.end() || !checks->is_array() || checks->empty()) {
    out << "audit: not run (the final state could not be read)\n";
    return;
  }
  std::int64_t passed = 0, failed = 0, skipped = 0;
  for (const auto& check : *checks) {
    auto result = check.value("result", "");
    (result == "passed" ? passed : result == "failed" ? failed : skipped)++;
  }
  auto total = static_cast<std::int64_t>(checks->size());
  out << "audit: ";
  if (passed == total)
    out << plural(total, "check") << " passed\n";
  else
    out << passed << " of " << plural(total, "check") << " passed"
        << (failed > 0 ? ", " + std::to_string(failed) + " failed" : "")
        << (skipped > 0 ? ", " + std::to_string(skipped) + " skipped" : "")
        << '\n';
  for (const auto& check : *checks) {
    auto result = check.value("result", "");
    if (result != "passed")
      out << "  " << result << ' ' << text::escaped(check.value("name", "?"))
          << ": " << text::escaped(check.value("detail", "")) << '\n';
  }
}

/// "917 of 2000 orders not placed, 1200 rows not published, ...".
std::string undone_text(const json& r) {
  auto undone = r.find("left_undone");
  if (undone == r.end() || !undone->is_object())
    return "";
  std::vector<std::string> parts;
  if (undone->contains("orders_not_placed"))
    parts.push_back(std::to_string(count_of(*undone, "orders_not_placed")) +
                    " of " + plural(count_of(r, "orders_target"), "order") +
                    " not placed");
  if (undone->contains("rows_not_published"))
    parts.push_back(plural(count_of(*undone, "rows_not_published"), "row") +
                    " not published");
  if (undone->contains("entries_not_consumed"))
    parts.push_back(
        plural(count_of(*undone, "entries_not_consumed"), "entry", "entries") +
        " not consumed");
  std::string line;
  for (const auto& part : parts)
    line += (line.empty() ? "" : ", ") + part;
  return line.empty() ? "nothing" : line;
}

bool interrupted(const json& r) {
  auto i = r.find("interrupted");
  return i != r.end() && i->is_boolean() && i->get<bool>();
}

} // namespace

std::string run_report_text(const std::string& report_json) {
  auto r = json::parse(report_json);
  bool ok = r.value("ok", false);
  std::ostringstream out;
  auto role = string_of(r, "role");
  out << (role.empty() ? "run" : text::escaped(role)) << ' '
      << (!ok              ? "FAILED"
          : interrupted(r) ? "INTERRUPTED"
                           : "OK")
      << " after " << rounded(number_of(r, "seconds")) << " s with "
      << plural(count_of(r, "relays"), "relay") << " and "
      << plural(count_of(r, "consumers"), "consumer") << '\n';

  // Only the parts that ran here: a relay's report has no orders/s.
  const auto& throughput = r["throughput"];
  out << "this run (this process):\n";
  if (count_of(r, "orders_target") > 0 || count_of(r, "orders_placed") > 0)
    // Each order's OrderPlaced comes with it; events_appended counts the
    // follow-ups alone, so the events written are the sum.
    out << "  " << plural(count_of(r, "orders_placed"), "order") << " placed, "
        << plural(count_of(r, "orders_placed") + count_of(r, "events_appended"),
                  "event")
        << " written (" << count_of(r, "events_appended")
        << " of them follow-ups): "
        << rounded(number_of(throughput, "orders_per_s")) << " orders/s\n";
  if (count_of(r, "relays") > 0)
    out << "  " << plural(count_of(r, "enqueued"), "event")
        << " enqueued by its relays: "
        << rounded(number_of(throughput, "events_enqueued_per_s"))
        << " events/s\n";
  if (count_of(r, "consumers") > 0)
    out << "  " << plural(count_of(r, "applied_here"), "event")
        << " applied by its consumers: "
        << rounded(number_of(throughput, "events_processed_per_s"))
        << " events/s; commit-to-processed latency "
        << latency_line(r["latency_ms"]) << '\n';
  if (const auto& lost = r["lost_commit_answers"];
      count_of(lost, "requests") > 0)
    out << "  COMMIT answers lost with the connection: "
        << plural(count_of(lost, "requests"), "request") << "; found "
        << count_of(lost, "found_committed") << " committed, "
        << count_of(lost, "found_not_committed")
        << " not committed (by lookup or by their retry)\n";
  out << "  injected faults: "
      << plural(count_of(r, "injected_crashes"), "crash", "crashes") << ", "
      << plural(count_of(r, "zombie_pauses"), "zombie pause") << "; restarted "
      << plural(count_of(r, "relay_restarts"), "relay") << ", "
      << plural(count_of(r, "consumer_restarts"), "consumer") << '\n'
      << "  leases: " << count_of(r, "lease_takeovers") << " taken over, "
      << plural(count_of(r, "fenced_acks_rejected"), "fenced ack")
      << " rejected, " << count_of(r, "expired_leases_dropped")
      << " expired before publishing; "
      << plural(count_of(r, "recovered_entries"), "in-flight entry",
                "in-flight entries")
      << " recovered, "
      << plural(count_of(r, "fenced_moves_refused"), "fenced consumer move")
      << " refused\n";

  out << "store-wide (every process sharing the database and Redis):\n";
  if (auto unread = string_of(r, "final_state_error"); !unread.empty())
    out << "  not read: " << text::escaped(unread) << '\n';
  else
    out << "  " << plural(count_of(r, "orders"), "order") << ", "
        << plural(count_of(r, "outbox_rows"), "outbox row") << ": "
        << count_of(r, "outbox_rows") - count_of(r, "pending_rows") -
               count_of(r, "sending_rows") - count_of(r, "failed_rows")
        << " published, " << count_of(r, "pending_rows") << " PENDING, "
        << count_of(r, "sending_rows") << " SENDING, "
        << count_of(r, "failed_rows") << " FAILED\n"
        << "  " << plural(count_of(r, "processed_unique"), "event")
        << " processed once, "
        << plural(count_of(r, "duplicates_absorbed"), "duplicate")
        << " absorbed, " << count_of(r, "dead_lettered") << " dead-lettered, "
        << plural(count_of(r, "order_violations"), "order violation") << '\n';
  audit_lines(out, r);

  if (interrupted(r))
    out << "left undone: " << undone_text(r) << '\n';
  if (auto stranded = string_of(r, "stranded_leases"); !stranded.empty())
    out << "note: " << text::escaped(stranded) << '\n';
  if (r.contains("violations") && r["violations"].is_array())
    for (const auto& v : r["violations"])
      if (v.is_string())
        out << "VIOLATED: " << text::escaped(v.get<std::string>()) << '\n';
  return out.str();
}

std::string run_report_interruption(const std::string& report_json) {
  auto r = json::parse(report_json, nullptr, false);
  if (r.is_discarded() || !r.is_object() || !interrupted(r))
    return "";
  auto undone = undone_text(r);
  return "interrupted before the run drained; left undone: " + undone;
}

} // namespace outbox::metrics
