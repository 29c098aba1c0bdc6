#include "bench/targets.hpp"

#include "bench/names.hpp"

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

bool on_postgres(const nlohmann::json& context) {
  return context.value("machine", nlohmann::json::object())
      .contains("postgres");
}

/// SQLite's targets; PostgreSQL has its own (pg_*) for the same stages.
std::string unless_sqlite(const nlohmann::json& context) {
  return on_postgres(context) ? "SQLite's target; on PostgreSQL see pg_*" : "";
}

std::string unless_postgres(const nlohmann::json& context) {
  return on_postgres(context) ? ""
                              : "PostgreSQL's target (bench --db "
                                "postgresql://...)";
}

std::string unless_fsync_always(const nlohmann::json& context) {
  if (auto why = unless_sqlite(context); !why.empty())
    return why;
  if (redis_fsyncs_every_write(context))
    return "";
  return "measured on " + persistence_text(context) +
         ", which does not fsync each write; scripts/run's Redis does";
}

/// More relay processes never slower: the lower of 2 / 1 and 4 / 2.
std::optional<double> relay_scaling(const results& r) {
  auto two = quotient(r, "relay_2", "relay_1");
  auto four = quotient(r, "relay_4", "relay_2");
  if (!two || !four)
    return std::nullopt;
  return std::min(*two, *four);
}

std::optional<double> in_ms(std::optional<double> us) {
  if (us)
    return *us / 1000;
  return std::nullopt;
}

// Round 1's targets, then round 2's (CPU per unit, shares of ceilings and
// flat memory), then the retention commands', then PostgreSQL's (round 3).
// A stage's targets are SQLite's or PostgreSQL's, as the run measured one.
const std::vector<target_rule>& target_rules() {
  static const std::vector<target_rule> rules{
      {"relay_share", "1 relay, share of its ceiling (one relay's bound)",
       [](const results& r) { return r.ratio("relay_1"); }, 0.85, false,
       unless_sqlite},
      {"relay_rate", "1 relay, events/s",
       [](const results& r) { return r.value("relay_1"); }, 100'000, false,
       unless_sqlite},
      {"relay_cpu", "relay CPU per event, outbox + Redis, us",
       [](const results& r) { return r.value("relay_cpu"); }, 8, true,
       unless_sqlite},
      {"group_commit_gain", "group commit / one transaction per order, FULL",
       [](const results& r) {
         return quotient(r, "writer_group_FULL", "writer_one_per_txn_FULL");
       },
       10, false, unless_sqlite},
      {"writer_share", "writer group commit, share of its ceiling, FULL",
       [](const results& r) { return r.ratio("writer_group_FULL"); }, 0.70,
       false, unless_sqlite},
      {"writer_cpu", "writer CPU per order, group commit, FULL, us",
       [](const results& r) { return r.value("writer_cpu_FULL"); }, 15, true,
       unless_sqlite},
      {"consumer_redis_cpu", "consumer, Redis CPU per entry, us",
       [](const results& r) { return r.value("consumer_redis_cpu"); }, 6, true},
      {"end_to_end_rate", "end to end, orders/s",
       [](const results& r) { return r.value("end_to_end_orders"); }, 50'000,
       false, unless_sqlite},
      {"cpu_per_order", "end to end, CPU per order, all processes, us",
       [](const results& r) { return r.value("cpu_per_order"); }, 60, true,
       unless_sqlite},
      {"claim_growth", "claim cost, large history / small history",
       [](const results& r) {
         return quotient(r, "claim_history_large", "claim_history_small");
       },
       1.5, true},
      {"latency_p99", "p99 commit-to-processed at the fixed load, ms",
       [](const results& r) { return r.value("latency_p99"); }, 10, true,
       unless_sqlite},
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
      {"pg_relay_cpu",
       "PostgreSQL: relay CPU per event, relay + server + Redis, us",
       [](const results& r) { return r.value("relay_cpu"); }, 40, true,
       unless_postgres},
      {"pg_relay_share", "PostgreSQL: 1 relay process, share of its ceiling",
       [](const results& r) { return r.ratio("relay_1"); }, 0.85, false,
       unless_postgres},
      {"pg_relay_scaling",
       "PostgreSQL: relay processes, the lower of 2 / 1 and 4 / 2",
       relay_scaling, 1.0, false, unless_postgres},
      {"pg_claim_ms",
       "PostgreSQL: one claim, large history and rows behind held heads, ms",
       [](const results& r) { return in_ms(r.value("claim_history_held")); }, 2,
       true, unless_postgres},
      {"pg_writer_cpu",
       "PostgreSQL: writer CPU per order, outbox + server, group commit, us",
       [](const results& r) { return r.value("writer_cpu_PG"); }, 100, true,
       unless_postgres},
      {"pg_end_to_end_rate",
       "PostgreSQL: end to end (2 relays, 1 consumer), orders/s",
       [](const results& r) { return r.value("end_to_end_orders"); }, 8000,
       false, unless_postgres},
      {"pg_latency_p99",
       "PostgreSQL: p99 commit-to-processed at the fixed load, ms",
       [](const results& r) { return r.value("latency_p99"); }, 25, true,
       unless_postgres},
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
  static const auto names = names_of(
      target_rules(), [](const target_rule& rule) { return rule.name; });
  return names;
}

void check_targets(results& r, const nlohmann::json& context,
                   const std::map<std::string, double>& wanted) {
  bool only_some_stages = context.contains("stages");
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
    else if (auto figure = rule.figure(r); !figure && only_some_stages)
      r.not_measured(rule.name, rule.text, value, rule.at_most,
                     "its stage was not run (bench --stage)");
    else
      r.check(rule.name, rule.text, figure, value, rule.at_most);
  }
}

} // namespace outbox::bench
