#include "cli/command_registration.hpp"
#include "cli/commands.hpp"
#include "cli/common_options.hpp"
#include "cli/database_to_read.hpp"
#include "cli/exit_codes.hpp"
#include "cli/failed_row_json.hpp"
#include "cli/text_table.hpp"
#include "storage/failed_listing.hpp"
#include "storage/outbox_views.hpp"
#include "text/event_headers.hpp"
#include "text/json_text.hpp"
#include "text/plural.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>
#include <string>
#include <vector>

namespace outbox::cli {

namespace {

struct failed_options {
  common_options common;
  bool json = false;
};

/// The table's last_error column is cut to this many characters (the JSON
/// has the whole text).
constexpr std::size_t failed_error_width = 60;

void print_table(const std::vector<storage::failed_row>& rows) {
  text_table table{{"EVENT_ID", "AGGREGATE_ID", "SEQ", "EVENT_TYPE", "ATTEMPTS",
                    "TRACE", "LAST_ERROR"}};
  for (const auto& r : rows)
    table.add_row({r.event_id, r.aggregate_id, std::to_string(r.seq),
                   r.event_type, std::to_string(r.attempts),
                   text::trace_id_of(r.headers).value_or("-"),
                   fit_keeping_end(r.last_error, failed_error_width)});
  std::cout << table.render();
}

int failed(const failed_options& options) {
  apply_log_level(options.common.log_level);
  auto settings = resolve_settings(options.common);
  auto db = open_existing_database_to_read(settings.db);
  auto rows = storage::all_failed_rows(*db->views());
  if (options.json) {
    nlohmann::json out{{"failed", nlohmann::json::array()},
                       {"count", rows.size()}};
    for (const auto& r : rows)
      out["failed"].push_back(failed_row_json(r));
    std::cout << text::json_text(out) << '\n';
  } else if (rows.empty()) {
    std::cout << "no FAILED rows\n";
  } else {
    print_table(rows);
    std::cout << text::plural(static_cast<std::int64_t>(rows.size()),
                              "FAILED row")
              << " (outbox retry EVENT_ID... or --all-failed puts them back)\n";
  }
  return exit_ok;
}

void add_flags(CLI::App& command, failed_options& options) {
  command.add_flag("--json", options.json,
                   "one JSON object on stdout, errors in full");
}

} // namespace

void add_failed_command(CLI::App& app, command_action& action) {
  add_command<failed_options>(
      app, action,
      {"failed",
       "List every FAILED outbox row with its last error, oldest first", failed,
       add_flags});
}

} // namespace outbox::cli
