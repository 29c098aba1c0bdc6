#include "cli/commands.hpp"
#include "cli/common_options.hpp"
#include "cli/exit_codes.hpp"
#include "storage/outbox_store.hpp"

#include <CLI/CLI.hpp>
#include <SQLiteCpp/Database.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <iomanip>
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

/// Rows per page read from the database.
constexpr int page_size = 500;

/// The table's last_error column is cut to this many characters.
constexpr std::size_t error_width = 60;

std::vector<storage::failed_row> all_failed_rows(storage::outbox_store& store) {
  std::vector<storage::failed_row> rows;
  std::int64_t after = 0;
  for (;;) {
    auto page = store.failed_rows(after, page_size);
    rows.insert(rows.end(), page.rows.begin(), page.rows.end());
    if (static_cast<int>(page.rows.size()) < page_size)
      return rows;
    after = page.last_rowid;
  }
}

/// One table line's error: on one line, cut with "..." when too long.
std::string cell_error(const std::string& error) {
  std::string flat = error;
  std::replace_if(
      flat.begin(), flat.end(), [](char c) { return c == '\n' || c == '\r'; },
      ' ');
  if (flat.size() <= error_width)
    return flat;
  return flat.substr(0, error_width - 3) + "...";
}

void print_table(const std::vector<storage::failed_row>& rows) {
  const std::vector<std::string> headers{"EVENT_ID", "AGGREGATE_ID",
                                         "SEQ",      "EVENT_TYPE",
                                         "ATTEMPTS", "LAST_ERROR"};
  std::vector<std::vector<std::string>> lines;
  for (const auto& r : rows)
    lines.push_back({r.event_id, r.aggregate_id, std::to_string(r.seq),
                     r.event_type, std::to_string(r.attempts),
                     cell_error(r.last_error)});
  std::vector<std::size_t> widths;
  for (const auto& h : headers)
    widths.push_back(h.size());
  for (const auto& line : lines)
    for (std::size_t i = 0; i < line.size(); ++i)
      widths[i] = std::max(widths[i], line[i].size());
  auto print = [&widths](const std::vector<std::string>& cells) {
    for (std::size_t i = 0; i + 1 < cells.size(); ++i)
      std::cout << std::left << std::setw(static_cast<int>(widths[i]))
                << cells[i] << "  ";
    std::cout << cells.back() << '\n';
  };
  print(headers);
  for (const auto& line : lines)
    print(line);
}

int failed(const failed_options& options) {
  apply_log_level(options.common.log_level);
  auto settings = resolve_settings(options.common);
  auto db = open_existing_database(settings.db);
  storage::outbox_store store{*db};
  auto rows = all_failed_rows(store);
  if (options.json) {
    nlohmann::json out{{"failed", nlohmann::json::array()},
                       {"count", rows.size()}};
    for (const auto& r : rows)
      out["failed"].push_back({{"event_id", r.event_id},
                               {"aggregate_id", r.aggregate_id},
                               {"seq", r.seq},
                               {"event_type", r.event_type},
                               {"attempts", r.attempts},
                               {"last_error", r.last_error}});
    std::cout << out.dump() << '\n';
  } else if (rows.empty()) {
    std::cout << "no FAILED rows\n";
  } else {
    print_table(rows);
    std::cout << rows.size() << " FAILED row" << (rows.size() == 1 ? "" : "s")
              << " (outbox retry EVENT_ID... or --all-failed puts them back)\n";
  }
  return exit_ok;
}

} // namespace

void add_failed_command(CLI::App& app, command_action& action) {
  auto options = std::make_shared<failed_options>();
  auto* command = app.add_subcommand(
      "failed", "List every FAILED outbox row with its last error, oldest "
                "first");
  command->add_flag("--json", options->json,
                    "one JSON object on stdout, errors in full");
  add_common_options(*command, options->common);
  command->callback(
      [options, &action] { action = [options] { return failed(*options); }; });
}

} // namespace outbox::cli
