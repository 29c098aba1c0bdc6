#include "bench/targets.hpp"

#include <algorithm>
#include <functional>
#include <optional>

namespace outbox::bench {

namespace {

/// A target: how its figure comes from the measurements, the value wanted
/// by default, and when it does not apply.
struct target_rule {
  const char* name;
  const char* text;
  std::function<std::optional<double>(const results&)> figure;
  double wanted;
  bool at_most;
  /// Why the target does not apply to this run ("" when it does).
  std::function<std::string(const nlohmann::json& context)> not_here =
      [](const nlohmann::json&) { return std::string{}; };
  /// Measured by a soak run (`--soak`), which measures nothing else.
  bool soak = false;
};

bool soak_run(const nlohmann::json& context) {
  return context.value("scale", nlohmann::json::object())
             .value("soak_events", std::int64_t{0}) > 0;
}

std::optional<double> quotient(const results& r, const std::string& a,
                               const std::string& b) {
  auto x = r.value(a);
  auto y = r.value(b);
  if (x && y && *y > 0)
    return *x / *y;
  return std::nullopt;
}

/// The first of `names` this run measured: SQLite's FULL figure, else
/// PostgreSQL's (whose orders always commit synchronously).
std::optional<double> first_of(const results& r,
                               std::initializer_list<const char*> names) {
  for (const char* name : names)
    if (auto v = r.value(name))
      return v;
  return std::nullopt;
}

std::optional<double> first_ratio(const results& r,
                                  std::initializer_list<const char*> names) {
  for (const char* name : names)
    if (auto v = r.ratio(name))
      return v;
  return std::nullopt;
}

std::string unless_fsync_always(const nlohmann::json& context) {
  if (redis_fsyncs_every_write(context))
    return "";
  return "measured on " + persistence_text(context) +
         ", which does not fsync each write; scripts/run's Redis does";
}

// Round 1's targets, then round 2's (CPU per unit, shares of ceilings and
// flat memory), then the retention commands'.
const std::vector<target_rule>& target_rules() {
  static const std::vector<target_rule> rules{
      {"relay_share", "1 relay, share of its ceiling (one relay's bound)",
       [](const results& r) { return r.ratio("relay_1"); }, 0.85, false},
      {"relay_rate", "1 relay, events/s",
       [](const results& r) { return r.value("relay_1"); }, 100'000, false},
      {"relay_cpu", "relay CPU per event, outbox + Redis, us",
       [](const results& r) { return r.value("relay_cpu"); }, 8, true},
      {"group_commit_gain", "group commit / one transaction per order, FULL",
       [](const results& r) {
         auto sqlite =
             quotient(r, "writer_group_FULL", "writer_one_per_txn_FULL");
         return sqlite
                    ? sqlite
                    : quotient(r, "writer_group_PG", "writer_one_per_txn_PG");
       },
       10, false},
      {"writer_share", "writer group commit, share of its ceiling, FULL",
       [](const results& r) {
         return first_ratio(r, {"writer_group_FULL", "writer_group_PG"});
       },
       0.70, false},
      {"writer_cpu", "writer CPU per order, group commit, FULL, us",
       [](const results& r) {
         return first_of(r, {"writer_cpu_FULL", "writer_cpu_PG"});
       },
       15, true},
      {"consumer_redis_cpu", "consumer, Redis CPU per entry, us",
       [](const results& r) { return r.value("consumer_redis_cpu"); }, 6, true},
      {"end_to_end_rate", "end to end, orders/s",
       [](const results& r) { return r.value("end_to_end_orders"); }, 50'000,
       false},
      {"cpu_per_order", "end to end, CPU per order, all processes, us",
       [](const results& r) { return r.value("cpu_per_order"); }, 60, true},
      {"claim_growth", "claim cost, large history / small history",
       [](const results& r) {
         return quotient(r, "claim_history_large", "claim_history_small");
       },
       1.5, true},
      {"latency_p99", "p99 commit-to-processed at the fixed load, ms",
       [](const results& r) { return r.value("latency_p99"); }, 10, true},
      {"latency_p99_fsync_always",
       "the same p99, Redis fsyncing every write, ms",
       [](const results& r) { return r.value("latency_p99"); }, 5, true,
       unless_fsync_always},
      {"soak_rss_growth", "soak: memory gained in the second half, MiB",
       [](const results& r) -> std::optional<double> {
         auto relay = r.value("soak_relay_rss_growth");
         auto consumer = r.value("soak_consumer_rss_growth");
         if (!relay || !consumer)
           return std::nullopt;
         return std::max(*relay, *consumer);
       },
       8, true, [](const nlohmann::json&) { return std::string{}; }, true},
      {"trim_records_per_s", "outbox trim, records of delivered events/s",
       [](const results& r) { return r.value("trim_records"); }, 20'000, false},
  };
  return rules;
}

} // namespace

bool redis_fsyncs_every_write(const nlohmann::json& context) {
  const auto& p = context.value("redis_persistence", nlohmann::json::object());
  return p.value("appendonly", nlohmann::json{}) == "yes" &&
         p.value("appendfsync", nlohmann::json{}) == "always";
}

const std::vector<std::string>& target_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> list;
    for (const auto& rule : target_rules())
      list.emplace_back(rule.name);
    return list;
  }();
  return names;
}

void check_targets(results& r, const nlohmann::json& context,
                   const std::map<std::string, double>& wanted) {
  for (const auto& rule : target_rules()) {
    auto given = wanted.find(rule.name);
    auto value = given == wanted.end() ? rule.wanted : given->second;
    if (rule.soak != soak_run(context))
      r.not_measured(rule.name, rule.text, value, rule.at_most,
                     rule.soak ? "measured by a soak run (outbox bench --soak "
                                 "EVENTS)"
                               : "a soak run measures memory only");
    else if (auto why = rule.not_here(context); !why.empty())
      r.not_measured(rule.name, rule.text, value, rule.at_most, why);
    else
      r.check(rule.name, rule.text, rule.figure(r), value, rule.at_most);
  }
}

} // namespace outbox::bench
