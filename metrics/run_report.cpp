#include "metrics/run_report.hpp"
#include "text/json_text.hpp"
#include "text/terminal_text.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <vector>

namespace outbox::metrics {

namespace {

std::vector<std::string> violations_of(const run_outcome& o,
                                       const nlohmann::json& audit) {
  std::vector<std::string> broke;
  if (!o.failure.empty())
    broke.push_back(o.failure);
  // A service's stop does not depend on reading the stores: its figures
  // are its own, and what it committed stays committed.
  if (!o.final_state.trouble.empty() && o.audited)
    broke.push_back(unread_state_violation + o.final_state.trouble);
  if (audit.contains("checks"))
    for (const auto& check : audit["checks"])
      if (check.value("result", "") == "failed")
        broke.push_back(check.value("name", "?") + ": " +
                        check.value("detail", ""));
  if (o.must_be_drained && o.final_state.pending + o.final_state.sending > 0)
    broke.push_back("not drained: " + std::to_string(o.final_state.pending) +
                    " PENDING, " + std::to_string(o.final_state.sending) +
                    " SENDING rows left");
  return broke;
}

} // namespace

std::string run_report_json(const run_outcome& o, const run_metrics& m) {
  auto audit = nlohmann::json::parse(o.audit_json.empty() ? "{}" : o.audit_json,
                                     nullptr, false);
  if (audit.is_discarded())
    audit = nlohmann::json::object();
  auto broke = violations_of(o, audit);
  if (o.audited && !o.audit_ok && broke.empty())
    broke.push_back("audit did not pass");
  auto latency = m.commit_to_processed.summary();
  const auto& s = o.final_state;
  double seconds = o.seconds > 0 ? o.seconds : 1e-9;
  nlohmann::json report{
      {"ok", broke.empty()},
      {"violations", broke},
      {"role", o.role},
      {"audited", o.audited},
      {"relays", o.relays},
      {"consumers", o.consumers},
      {"seconds", o.seconds},
      {"orders", s.orders},
      {"outbox_rows", s.outbox_rows},
      {"enqueued", m.enqueued.load()},
      {"processed_unique", s.processed},
      {"duplicates_absorbed", s.duplicates},
      {"relay_restarts", m.relay_restarts.load()},
      {"consumer_restarts", m.consumer_restarts.load()},
      {"injected_crashes", m.injected_crashes.load()},
      {"zombie_pauses", m.zombie_pauses.load()},
      {"fenced_acks_rejected", m.fenced_acks_rejected.load()},
      {"expired_leases_dropped", m.expired_leases_dropped.load()},
      {"fenced_moves_refused", m.fenced_moves_refused.load()},
      {"recovered_entries", m.recovered_entries.load()},
      {"lease_takeovers", m.lease_takeovers.load()},
      {"order_violations", s.order_violations},
      {"dead_lettered", s.dead_lettered},
      {"failed_rows", s.failed},
      {"pending_rows", s.pending},
      {"sending_rows", s.sending},
      {"orders_placed", m.orders_placed.load()},
      {"events_appended", m.events_appended.load()},
      {"lost_commit_answers",
       {{"requests", m.commits_unknown.load()},
        {"found_committed", m.unknown_found_committed.load()},
        {"found_not_committed", m.unknown_found_not_committed.load()}}},
      {"applied_here", m.applied.load()},
      {"throughput",
       {{"orders_per_s", m.orders_placed.load() / seconds},
        {"events_enqueued_per_s", m.enqueued.load() / seconds},
        {"events_processed_per_s", m.applied.load() / seconds}}},
      {"latency_ms",
       {{"samples", latency.samples},
        {"p50", latency.p50},
        {"p95", latency.p95},
        {"p99", latency.p99}}},
      {"audit", audit},
      {"final_state_error", s.trouble},
      {"interrupted", o.interrupted},
      {"orders_target", o.orders_target},
      {"stranded_leases", o.stranded_leases},
  };
  if (o.interrupted) {
    // Only what this process was to do: a writer-only run leaves the rows
    // to relays elsewhere, not undone.
    nlohmann::json undone = nlohmann::json::object();
    if (o.orders_target > 0)
      undone["orders_not_placed"] =
          std::max<std::int64_t>(o.orders_target - m.orders_placed.load(), 0);
    if (o.relays > 0)
      undone["rows_not_published"] = s.pending + s.sending;
    if (o.consumers > 0)
      undone["entries_not_consumed"] = s.queued + s.in_processing;
    report["left_undone"] = undone;
  }
  // Messages quote paths and Redis replies: invalid UTF-8 is replaced, not
  // thrown, so the run always gets its report.
  return text::json_text(report);
}

bool run_report_ok(const std::string& report_json) {
  auto r = nlohmann::json::parse(report_json, nullptr, false);
  return !r.is_discarded() && r.value("ok", false);
}

std::string run_report_failure(const std::string& report_json) {
  auto r = nlohmann::json::parse(report_json, nullptr, false);
  if (r.is_discarded() || !r.is_object())
    return "the report is not a JSON object";
  std::vector<std::string> broke;
  auto v = r.find("violations");
  if (v != r.end() && v->is_array())
    for (const auto& item : *v)
      if (item.is_string())
        broke.push_back(item.get<std::string>());
  auto unread = r.find("final_state_error");
  bool unread_state = unread != r.end() && unread->is_string() &&
                      !unread->get<std::string>().empty();
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
  auto stranded = r.find("stranded_leases");
  if (stranded != r.end() && stranded->is_string() &&
      !stranded->get<std::string>().empty())
    line += "; " + stranded->get<std::string>();
  return line;
}

} // namespace outbox::metrics
