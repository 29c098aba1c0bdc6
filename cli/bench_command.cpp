#include "bench/bench.hpp"
#include "bench/results.hpp"
#include "cli/command_registration.hpp"
#include "cli/commands.hpp"
#include "cli/common_options.hpp"
#include "cli/exit_codes.hpp"
#include "storage/db_folder.hpp"
#include "text/json_text.hpp"
#include "text/terminal_text.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace outbox::cli {

namespace {

struct bench_command_options {
  common_options common;
  bool json = false;
  bool quick = false;
  bool check = false;
  std::vector<std::string> targets;
  /// Hidden: every stage in seconds, for the tests of the command.
  bool tiny = false;
};

/// The --target NAME=VALUE flags as name -> value, or nothing after saying
/// on stderr which one is wrong.
std::optional<std::map<std::string, double>>
parse_targets(const std::vector<std::string>& flags) {
  std::map<std::string, double> targets;
  const auto& names = bench::target_names();
  for (const auto& flag : flags) {
    auto equals = flag.find('=');
    auto name = flag.substr(0, equals);
    auto known = std::find(names.begin(), names.end(), name) != names.end();
    if (equals == std::string::npos || !known) {
      std::cerr << "outbox bench: --target " << text::escaped(flag)
                << ": expected NAME=VALUE with NAME one of";
      for (const auto& n : names)
        std::cerr << ' ' << n;
      std::cerr << '\n';
      return std::nullopt;
    }
    auto value_text = flag.substr(equals + 1);
    char* end = nullptr;
    double value = std::strtod(value_text.c_str(), &end);
    if (value_text.empty() || *end != '\0' || !std::isfinite(value)) {
      std::cerr << "outbox bench: --target " << text::escaped(flag)
                << ": the value must be a finite number\n";
      return std::nullopt;
    }
    if (!targets.emplace(name, value).second) {
      std::cerr << "outbox bench: --target " << name << " given twice\n";
      return std::nullopt;
    }
  }
  return targets;
}

/// One stderr line per target the run did not meet.
void report_missed_targets(const nlohmann::json& report) {
  for (const auto& t : report.at("targets")) {
    if (t.at("met").get<bool>())
      continue;
    std::cerr << "outbox bench: target not met: "
              << t.at("name").get<std::string>() << " ("
              << t.at("text").get<std::string>()
              << "): " << t.at("value").get<double>() << ", wanted "
              << (t.at("at_most").get<bool>() ? "<= " : ">= ")
              << t.at("wanted").get<double>() << '\n';
  }
}

/// This program's path, for the processes the bench starts.
std::string own_program() {
  std::error_code error;
  auto path = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? std::string{} : path.string();
}

int bench(const bench_command_options& options) {
  apply_log_level(options.common.log_level);
  auto targets = parse_targets(options.targets);
  if (!targets)
    return exit_usage;
  bench::bench_options o;
  o.targets = *targets;
  if (options.tiny)
    o.scale = bench::bench_scale::tiny();
  o.settings = resolve_settings(options.common);
  o.quick = options.quick;
  if (o.settings.db.postgres()) {
    // A scratch database of its own on that server (made and dropped by
    // the bench); the folder holds only the relay processes' config and
    // logs.
    o.scratch_parent = "";
    o.program = own_program();
  } else {
    // Next to the configured database, so fsync costs are those of its
    // disk; its folder follows the rule of every writing command.
    storage::prepare_database_folder(o.settings.db);
    auto parent = std::filesystem::path{o.settings.db.path}.parent_path();
    if (parent.empty())
      parent = ".";
    o.scratch_parent = parent.string();
  }
  o.progress = [](const std::string& step) {
    std::cerr << "bench: " << text::escaped(step) << '\n';
  };
  auto report = bench::run_bench(o);
  if (options.json)
    std::cout << text::json_text(report) << '\n';
  else
    std::cout << bench::results_table(report);
  for (const auto& e : report.at("errors"))
    std::cerr << "outbox bench: stage " << e.at("stage").get<std::string>()
              << " failed: " << text::escaped(e.at("error").get<std::string>())
              << '\n';
  if (!report.at("ok").get<bool>())
    return exit_failure;
  if (options.check && !report.at("targets_met").get<bool>()) {
    report_missed_targets(report);
    return exit_failure;
  }
  return exit_ok;
}

void add_flags(CLI::App& command, bench_command_options& options) {
  command.add_flag("--json", options.json, "one JSON object on stdout");
  command.add_flag("--quick", options.quick,
                   "smaller stages: well under a minute");
  command.add_flag("--check", options.check,
                   "exit 1 when a target is not met (README "
                   "\"Performance\"), naming each on stderr");
  command.add_option("--target", options.targets,
                     "NAME=VALUE: the value wanted for a target instead "
                     "of the README's (repeatable; names in the report)");
  // Hidden: the tests run the command at a scale that takes seconds.
  command.add_flag("--tiny", options.tiny)->group("");
}

} // namespace

void add_bench_command(CLI::App& app, command_action& action) {
  add_command<bench_command_options>(
      app, action,
      {"bench",
       "Measure the pipeline against ceilings measured in the same run (own "
       "scratch database next to --db, or on its PostgreSQL server; own "
       "Redis keys)",
       bench, add_flags});
}

} // namespace outbox::cli
