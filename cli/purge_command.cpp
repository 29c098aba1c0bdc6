#include "cli/command_registration.hpp"
#include "cli/commands.hpp"
#include "cli/common_options.hpp"
#include "cli/duration.hpp"
#include "cli/exit_codes.hpp"
#include "cli/retention_flags.hpp"
#include "storage/purge_run.hpp"
#include "storage/retention_store.hpp"
#include "storage/store_error.hpp"
#include "text/json_text.hpp"
#include "text/plural.hpp"
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

int purge(const retention_options& options) {
  auto older_than = retention_age(options);
  if (!older_than)
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
              << "outbox purge: partly done: stopped after "
              << text::plural(batches, "committed batch", "committed batches")
              << " (" << text::plural(deleted, "row")
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

void add_flags(CLI::App& command, retention_options& options) {
  add_retention_flags(command, options, "--published-older-than",
                      "DURATION: 500ms, 30s, 15m, 12h, 7d",
                      "rows per transaction (default 1000, 1 to 10000)");
}

} // namespace

void add_purge_command(CLI::App& app, command_action& action) {
  add_command<retention_options>(
      app, action,
      {"purge",
       "Delete PUBLISHED outbox rows published longer ago than DURATION, in "
       "short batches",
       purge, add_flags});
}

} // namespace outbox::cli
