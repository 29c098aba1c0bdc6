#include "bench/bench.hpp"
#include "bench/results.hpp"
#include "cli/commands.hpp"
#include "cli/common_options.hpp"
#include "cli/exit_codes.hpp"
#include "storage/db_folder.hpp"
#include "text/json_text.hpp"
#include "text/terminal_text.hpp"

#include <CLI/CLI.hpp>

#include <filesystem>
#include <iostream>
#include <memory>

namespace outbox::cli {

namespace {

struct bench_command_options {
  common_options common;
  bool json = false;
  bool quick = false;
};

int bench(const bench_command_options& options) {
  apply_log_level(options.common.log_level);
  bench::bench_options o;
  o.settings = resolve_settings(options.common);
  o.quick = options.quick;
  // Next to the configured database, so fsync costs are those of its disk;
  // its folder follows the rule of every writing command.
  storage::prepare_database_folder(o.settings.db);
  auto parent = std::filesystem::path{o.settings.db.path}.parent_path();
  if (parent.empty())
    parent = ".";
  o.scratch_parent = parent.string();
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
  return report.at("ok").get<bool>() ? exit_ok : exit_failure;
}

} // namespace

void add_bench_command(CLI::App& app, command_action& action) {
  auto options = std::make_shared<bench_command_options>();
  auto* command = app.add_subcommand(
      "bench", "Measure the pipeline against ceilings measured in the same "
               "run (own scratch database next to --db, own Redis keys)");
  command->add_flag("--json", options->json, "one JSON object on stdout");
  command->add_flag("--quick", options->quick,
                    "smaller stages: well under a minute");
  add_common_options(*command, options->common);
  command->callback(
      [options, &action] { action = [options] { return bench(*options); }; });
}

} // namespace outbox::cli
