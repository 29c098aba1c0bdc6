#pragma once

#include <nlohmann/json.hpp>

#include <map>
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
  /// False when the target does not apply to what this run measured
  /// (`why` says so); such a target is neither met nor missed.
  bool measured = true;
  std::string why;
};

/// Why a share over 100% is possible when the stage gives no reason of its
/// own.
inline constexpr const char* default_over_ceiling =
    "the two are measured separately, seconds apart, on a machine shared "
    "with other work, and short stages (--quick) carry warm-up costs: over "
    "100% says the stage is within noise of its ceiling, not that it beats "
    "it";

/// Everything one benchmark run measured, in order.
class results {
public:
  /// `over_ceiling`: why this stage can do better than its ceiling, shown
  /// when it does (empty: default_over_ceiling).
  void add(measurement m, std::string over_ceiling = "");
  /// Nothing when `name` was not measured (a stage was skipped or failed).
  std::optional<double> value(const std::string& name) const;
  /// value(name) / value(ceiling of name).
  std::optional<double> ratio(const std::string& name) const;

  /// Checks `value >= wanted` (or `<=` when at_most) and records the target.
  /// `text` says what is compared, in words.
  void check(std::string name, std::string text, std::optional<double> value,
             double wanted, bool at_most = false);

  /// Records a target that does not apply to this run, and why.
  void not_measured(std::string name, std::string text, double wanted,
                    bool at_most, std::string why);

  /// True when every target checked so far and measured is met.
  bool targets_met() const;

  nlohmann::json to_json(const nlohmann::json& context) const;

private:
  std::vector<measurement> measurements_;
  /// By measurement name: its own reason for a share over 100%.
  std::map<std::string, std::string> over_ceiling_;
  std::vector<target> targets_;
};

/// A figure as the table shows it: whole from 1000, one decimal from 10,
/// else two.
std::string figure_text(double value);

/// The Redis persistence a report's context (`redis_persistence`) records,
/// in words: "Redis with appendonly yes, appendfsync always"; "" when the
/// context has none.
std::string persistence_text(const nlohmann::json& report);

/// The table `outbox bench` prints (from to_json's output): each section
/// with its figures, a share's ceiling named in words (and why a share
/// over 100% is possible), then the targets.
std::string results_table(const nlohmann::json& report);

} // namespace outbox::bench
