#include "cli/batch_flag.hpp"
#include "cli/commands.hpp"
#include "cli/common_options.hpp"
#include "cli/duration.hpp"
#include "cli/exit_codes.hpp"
#include "storage/purge_run.hpp"
#include "storage/retention_store.hpp"
#include "storage/store_error.hpp"
#include "text/json_text.hpp"
#include "text/terminal_text.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

namespace outbox::cli {

namespace {

struct purge_options {
  common_options common;
  std::string older_than;
  int batch = 1000;
  bool json = false;
};

int purge(const purge_options& options) {
  apply_log_level(options.common.log_level);
  auto older_than =
      duration_flag("purge", "--published-older-than", options.older_than);
  if (!older_than)
    return exit_usage;
  if (!batch_in_range("purge", options.batch))
    return exit_usage;
  auto settings = resolve_settings(options.common);
  auto db = open_existing_database(settings.db);
  auto cutoff = storage::wall_clock_now() - *older_than;
  const auto [deleted, request_keys, aggregate_heads, batches, stopped_by] =
      storage::purge_published_before(*db->retention(), cutoff, options.batch);
  if (stopped_by) {
    // After committed batches: partly done, and a rerun finishes it.
    std::cerr << "outbox purge: database error ("
              << to_string(stopped_by->code())
              << "): " << text::escaped(stopped_by->what()) << '\n'
              << "outbox purge: partly done: stopped after " << batches
              << (batches == 1 ? " committed batch (" : " committed batches (")
              << deleted << (deleted == 1 ? " row" : " rows")
              << " deleted); run it again to finish\n";
    return exit_partial;
  }

  if (options.json) {
    std::cout << text::json_text(
                     nlohmann::json{{"deleted", deleted},
                                    {"batches", batches},
                                    {"cutoff", cutoff},
                                    {"request_keys", request_keys},
                                    {"aggregate_heads", aggregate_heads}})
              << '\n';
  } else {
    std::cout << "deleted " << deleted << " PUBLISHED rows published before "
              << format_utc(cutoff) << " in " << batches << " batches ("
              << request_keys << " request keys with them); " << aggregate_heads
              << " were the last of their aggregate (its seq kept in "
                 "aggregate_heads)\n";
  }
  return exit_ok;
}

} // namespace

void add_purge_command(CLI::App& app, command_action& action) {
  auto options = std::make_shared<purge_options>();
  auto* command = app.add_subcommand(
      "purge", "Delete PUBLISHED outbox rows published longer ago than "
               "DURATION, in short batches");
  command
      ->add_option("--published-older-than", options->older_than,
                   "DURATION: 500ms, 30s, 15m, 12h, 7d")
      ->required();
  command->add_option("--batch", options->batch,
                      "rows per transaction (default 1000, 1 to 10000)");
  command->add_flag("--json", options->json, "one JSON object on stdout");
  add_common_options(*command, options->common);
  command->callback(
      [options, &action] { action = [options] { return purge(*options); }; });
}

} // namespace outbox::cli
