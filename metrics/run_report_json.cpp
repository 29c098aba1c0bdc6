#include "metrics/run_report_json.hpp"
#include "text/json_text.hpp"

#include <nlohmann/json.hpp>

namespace outbox::metrics {

namespace {

using json = nlohmann::json;

json undone_json(const left_undone& undone) {
  json out = json::object();
  if (undone.orders_not_placed)
    out["orders_not_placed"] = *undone.orders_not_placed;
  if (undone.rows_not_published)
    out["rows_not_published"] = *undone.rows_not_published;
  if (undone.entries_not_consumed)
    out["entries_not_consumed"] = *undone.entries_not_consumed;
  return out;
}

/// Sets `to` from `from[key]` when `fits` says that holds a `Value`.
template <class Value, class To>
void read_if(const json& from, const char* key, To& to,
             bool (json::*fits)() const noexcept) {
  auto i = from.find(key);
  if (i != from.end() && ((*i).*fits)())
    to = i->get<Value>();
}

void read_whole(const json& from, const char* key, std::int64_t& to) {
  read_if<std::int64_t>(from, key, to, &json::is_number_integer);
}

void read_whole(const json& from, const char* key, int& to) {
  read_if<int>(from, key, to, &json::is_number_integer);
}

void read_whole(const json& from, const char* key,
                std::optional<std::int64_t>& to) {
  read_if<std::int64_t>(from, key, to, &json::is_number_integer);
}

void read_real(const json& from, const char* key, double& to) {
  read_if<double>(from, key, to, &json::is_number);
}

void read_flag(const json& from, const char* key, bool& to) {
  read_if<bool>(from, key, to, &json::is_boolean);
}

void read_words(const json& from, const char* key, std::string& to) {
  read_if<std::string>(from, key, to, &json::is_string);
}

/// The object under `key`, or an empty one.
const json& part_of(const json& from, const char* key) {
  static const json none = json::object();
  auto i = from.find(key);
  return i != from.end() && i->is_object() ? *i : none;
}

} // namespace

std::string to_json(const run_report& r) {
  json report{
      {"ok", r.ok},
      {"violations", r.violations},
      {"role", r.role},
      {"audited", r.audited},
      {"relays", r.relays},
      {"consumers", r.consumers},
      {"seconds", r.seconds},
      {"orders", r.orders},
      {"outbox_rows", r.outbox_rows},
      {"enqueued", r.enqueued},
      {"processed_unique", r.processed_unique},
      {"duplicates_absorbed", r.duplicates_absorbed},
      {"relay_restarts", r.relay_restarts},
      {"consumer_restarts", r.consumer_restarts},
      {"injected_crashes", r.injected_crashes},
      {"zombie_pauses", r.zombie_pauses},
      {"fenced_acks_rejected", r.fenced_acks_rejected},
      {"expired_leases_dropped", r.expired_leases_dropped},
      {"fenced_moves_refused", r.fenced_moves_refused},
      {"recovered_entries", r.recovered_entries},
      {"lease_takeovers", r.lease_takeovers},
      {"order_violations", r.order_violations},
      {"dead_lettered", r.dead_lettered},
      {"failed_rows", r.failed_rows},
      {"pending_rows", r.pending_rows},
      {"sending_rows", r.sending_rows},
      {"orders_placed", r.orders_placed},
      {"events_appended", r.events_appended},
      {"lost_commit_answers",
       {{"requests", r.lost_commit_answers.requests},
        {"found_committed", r.lost_commit_answers.found_committed},
        {"found_not_committed", r.lost_commit_answers.found_not_committed}}},
      {"applied_here", r.applied_here},
      {"throughput",
       {{"orders_per_s", r.throughput.orders_per_s},
        {"events_enqueued_per_s", r.throughput.events_enqueued_per_s},
        {"events_processed_per_s", r.throughput.events_processed_per_s}}},
      {"latency_ms",
       {{"samples", r.latency_ms.samples},
        {"p50", r.latency_ms.p50},
        {"p95", r.latency_ms.p95},
        {"p99", r.latency_ms.p99}}},
      {"audit", r.audit ? audit_verdict_json(*r.audit) : json::object()},
      {"final_state_error", r.final_state_error},
      {"interrupted", r.interrupted},
      {"orders_target", r.orders_target},
      {"stranded_leases", r.stranded_leases},
  };
  if (r.undone)
    report["left_undone"] = undone_json(*r.undone);
  // Messages quote paths and Redis replies: invalid UTF-8 is replaced, not
  // thrown, so the run always gets its report.
  return text::json_text(report);
}

std::optional<run_report> run_report_from_json(const std::string& text) {
  auto j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return std::nullopt;
  run_report r;
  read_flag(j, "ok", r.ok);
  auto violations = j.find("violations");
  if (violations != j.end() && violations->is_array())
    for (const auto& item : *violations)
      if (item.is_string())
        r.violations.push_back(item.get<std::string>());
  read_words(j, "role", r.role);
  read_flag(j, "audited", r.audited);
  read_whole(j, "relays", r.relays);
  read_whole(j, "consumers", r.consumers);
  read_real(j, "seconds", r.seconds);
  read_whole(j, "orders", r.orders);
  read_whole(j, "outbox_rows", r.outbox_rows);
  read_whole(j, "processed_unique", r.processed_unique);
  read_whole(j, "duplicates_absorbed", r.duplicates_absorbed);
  read_whole(j, "order_violations", r.order_violations);
  read_whole(j, "dead_lettered", r.dead_lettered);
  read_whole(j, "failed_rows", r.failed_rows);
  read_whole(j, "pending_rows", r.pending_rows);
  read_whole(j, "sending_rows", r.sending_rows);
  read_words(j, "final_state_error", r.final_state_error);
  read_whole(j, "enqueued", r.enqueued);
  read_whole(j, "relay_restarts", r.relay_restarts);
  read_whole(j, "consumer_restarts", r.consumer_restarts);
  read_whole(j, "injected_crashes", r.injected_crashes);
  read_whole(j, "zombie_pauses", r.zombie_pauses);
  read_whole(j, "fenced_acks_rejected", r.fenced_acks_rejected);
  read_whole(j, "expired_leases_dropped", r.expired_leases_dropped);
  read_whole(j, "fenced_moves_refused", r.fenced_moves_refused);
  read_whole(j, "recovered_entries", r.recovered_entries);
  read_whole(j, "lease_takeovers", r.lease_takeovers);
  read_whole(j, "orders_placed", r.orders_placed);
  read_whole(j, "events_appended", r.events_appended);
  read_whole(j, "applied_here", r.applied_here);
  const auto& lost = part_of(j, "lost_commit_answers");
  read_whole(lost, "requests", r.lost_commit_answers.requests);
  read_whole(lost, "found_committed", r.lost_commit_answers.found_committed);
  read_whole(lost, "found_not_committed",
             r.lost_commit_answers.found_not_committed);
  const auto& rates = part_of(j, "throughput");
  read_real(rates, "orders_per_s", r.throughput.orders_per_s);
  read_real(rates, "events_enqueued_per_s", r.throughput.events_enqueued_per_s);
  read_real(rates, "events_processed_per_s",
            r.throughput.events_processed_per_s);
  const auto& latency = part_of(j, "latency_ms");
  read_whole(latency, "samples", r.latency_ms.samples);
  read_real(latency, "p50", r.latency_ms.p50);
  read_real(latency, "p95", r.latency_ms.p95);
  read_real(latency, "p99", r.latency_ms.p99);
  // An audit that was not run is written as {}.
  if (const auto& audit = part_of(j, "audit"); !audit.empty())
    r.audit = audit_verdict_from_json(audit);
  read_flag(j, "interrupted", r.interrupted);
  read_whole(j, "orders_target", r.orders_target);
  read_words(j, "stranded_leases", r.stranded_leases);
  if (auto undone = j.find("left_undone");
      undone != j.end() && undone->is_object()) {
    r.undone.emplace();
    read_whole(*undone, "orders_not_placed", r.undone->orders_not_placed);
    read_whole(*undone, "rows_not_published", r.undone->rows_not_published);
    read_whole(*undone, "entries_not_consumed", r.undone->entries_not_consumed);
  }
  return r;
}

} // namespace outbox::metrics
