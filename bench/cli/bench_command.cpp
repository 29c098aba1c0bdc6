#include "bench/bench.hpp"
#include "bench/cli/bench_commands.hpp"
#include "bench/interrupt_cleanup.hpp"
#include "bench/results.hpp"
#include "bench/targets.hpp"
#include "cli/bench_forward.hpp"
#include "cli/command_registration.hpp"
#include "cli/common_options.hpp"
#include "cli/exit_codes.hpp"
#include "cli/stop_signals.hpp"
#include "storage/db_folder.hpp"
#include "text/json_text.hpp"
#include "text/terminal_text.hpp"

#include <CLI/CLI.hpp>

#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace outbox::cli {

namespace {

/// Fewer events than this cannot tell a cache warming up from growth.
constexpr std::int64_t min_soak_events = 1000;

struct bench_command_options {
  common_options common;
  bool json = false;
  bool quick = false;
  bool check = false;
  std::vector<std::string> targets;
  std::vector<std::string> stages;
  /// Hidden: every stage in seconds, for the tests of the command.
  bool tiny = false;
  /// A soak run over this many events instead of the stages.
  std::optional<std::int64_t> soak;
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
    if (t.at("met").get<bool>() || !t.at("measured").get<bool>())
      continue;
    std::cerr << "outbox bench: target not met: "
              << t.at("name").get<std::string>() << " ("
              << t.at("text").get<std::string>()
              << "): " << t.at("value").get<double>() << ", wanted "
              << (t.at("at_most").get<bool>() ? "<= " : ">= ")
              << t.at("wanted").get<double>() << '\n';
  }
}

/// Takes SIGINT and SIGTERM while the bench runs: a stop undoes what the
/// bench made (its scratch database, its folder, its Redis keys; its relay
/// processes end with it) and exits 130 or 143, rather than leave them.
class stop_cleanup {
public:
  stop_cleanup() {
    auto stop = stop_signals();
    ::pthread_sigmask(SIG_BLOCK, &stop, nullptr);
    thread_ = std::thread([this, stop] {
      timespec tick{0, 200'000'000};
      while (!done_) {
        int taken = 0;
        try {
          taken = wait_for_signal(stop, tick);
        } catch (const std::system_error&) {
          return;
        }
        if (taken == 0)
          continue;
        std::cerr << "\noutbox bench: " << signal_name(taken)
                  << ": stopping; removing the bench's scratch data\n";
        bench::run_cleanups();
        std::_Exit(taken == SIGTERM ? exit_terminated : exit_interrupted);
      }
    });
  }
  ~stop_cleanup() {
    done_ = true;
    thread_.join();
  }
  stop_cleanup(const stop_cleanup&) = delete;
  stop_cleanup& operator=(const stop_cleanup&) = delete;

private:
  std::atomic<bool> done_{false};
  std::thread thread_;
};

int bench(const bench_command_options& options) {
  apply_log_level(options.common.log_level);
  auto targets = parse_targets(options.targets);
  if (!targets)
    return exit_usage;
  if (options.soak && *options.soak < min_soak_events) {
    std::cerr << "outbox bench: --soak " << *options.soak << ": give at least "
              << min_soak_events
              << " events (fewer cannot tell a warming cache from growth)\n";
    return exit_usage;
  }
  for (const auto& name : options.stages)
    if (!std::count(bench::stage_names().begin(), bench::stage_names().end(),
                    name)) {
      std::cerr << "outbox bench: --stage " << text::escaped(name)
                << ": no such stage; the stages are";
      for (const auto& known : bench::stage_names())
        std::cerr << ' ' << known;
      std::cerr << '\n';
      return exit_usage;
    }
  if (options.soak && !options.stages.empty()) {
    std::cerr << "outbox bench: --soak and --stage: a soak runs its own "
                 "stage only; give one of them\n";
    return exit_usage;
  }
  if (options.soak && options.quick) {
    std::cerr << "outbox bench: --soak and --quick: a soak runs no stages to "
                 "shorten; give one of them\n";
    return exit_usage;
  }
  bench::bench_options o;
  o.targets = *targets;
  o.stages = options.stages;
  o.soak_events = options.soak.value_or(0);
  // The running program itself, outbox-bench, even if its file was
  // replaced since: the stages that run pipeline processes of it.
  o.program = "/proc/self/exe";
  if (options.tiny)
    o.scale = bench::bench_scale::tiny();
  o.settings = resolve_settings(options.common);
  o.quick = options.quick;
  if (o.settings.db.postgres()) {
    // A scratch database of its own on that server (made and dropped by
    // the bench); the folder holds only the relay processes' config and
    // logs.
    o.scratch_parent = "";
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
  nlohmann::json report;
  {
    stop_cleanup on_stop;
    report = bench::run_bench(o);
  }
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
                   "exit 1 when a target is not met (docs/performance.md), "
                   "naming each on stderr");
  command.add_option("--target", options.targets,
                     "NAME=VALUE: the value wanted for a target instead "
                     "of docs/performance.md's (repeatable; names in the "
                     "report)");
  command.add_option("--stage", options.stages,
                     "NAME: only this stage (repeatable): ceilings, writer, "
                     "relay, consumer, end_to_end, growth or trim; the "
                     "targets of the others are not measured");
  command.add_option("--soak", options.soak,
                     "EVENTS: instead of the stages, a relay process and then "
                     "a consumer process over EVENTS events each, their "
                     "resident memory sampled (docs/performance.md)");
  // Hidden: the tests run the command at a scale that takes seconds.
  command.add_flag("--tiny", options.tiny)->group("");
}

} // namespace

void add_bench_command(CLI::App& app, command_action& action) {
  add_command<bench_command_options>(
      app, action, {"bench", bench_description, bench, add_flags});
}

} // namespace outbox::cli
