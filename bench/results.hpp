#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace outbox::bench {

/// One figure of a benchmark run.
struct measurement {
  /// ceiling, writer, relay, consumer, end_to_end, growth.
  std::string section;
  /// Stable key for scripts ("relay_1"); unique in a run.
  std::string name;
  /// What was measured, for the table.
  std::string label;
  double value = 0;
  std::string unit;
  /// The measurement this one is a share of (empty: none).
  std::string ceiling;
};

/// A target of the performance issue, checked against this run's figures.
struct target {
  std::string name;
  std::string text;
  double value = 0;
  double wanted = 0;
  /// The value must stay at or below `wanted` (a cost), not reach it.
  bool at_most = false;
  bool met = false;
};

/// Everything one benchmark run measured, in order.
class results {
public:
  void add(measurement m);
  /// Nothing when `name` was not measured (a stage was skipped or failed).
  std::optional<double> value(const std::string& name) const;
  /// value(name) / value(ceiling of name).
  std::optional<double> ratio(const std::string& name) const;

  /// Checks `value >= wanted` (or `<=` when at_most) and records the target.
  void check(std::string name, std::string text, std::optional<double> value,
             double wanted, bool at_most = false);

  nlohmann::json to_json(const nlohmann::json& context) const;

private:
  std::vector<measurement> measurements_;
  std::vector<target> targets_;
};

/// The table `outbox bench` prints (from to_json's output).
std::string results_table(const nlohmann::json& report);

} // namespace outbox::bench
