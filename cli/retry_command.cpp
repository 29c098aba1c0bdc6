#include "cli/command_flags.hpp"
#include "cli/command_registration.hpp"
#include "cli/commands.hpp"
#include "cli/common_options.hpp"
#include "cli/exit_codes.hpp"
#include "cli/output_mode.hpp"
#include "storage/outbox_views.hpp"
#include "text/json_text.hpp"
#include "text/plural.hpp"
#include "text/terminal_text.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>
#include <set>

namespace outbox::cli {

namespace {

struct retry_options {
  common_options common;
  std::vector<std::string> event_ids;
  bool all_failed = false;
  bool json = false;
};

std::string rows(std::size_t n) {
  return text::plural(static_cast<std::int64_t>(n), "FAILED row");
}

int retry(const retry_options& options) {
  apply_log_level(options.common.log_level);
  if (options.all_failed == !options.event_ids.empty()) {
    std::cerr << "outbox retry: give either EVENT_ID... or --all-failed\n";
    return exit_usage;
  }
  auto settings = resolve_settings(options.common);
  auto db = open_existing_database(settings.db);
  auto outbox = db->views();
  auto now = storage::wall_clock_now();
  if (options.all_failed) {
    int retried = outbox->retry_all_failed(now);
    if (prints_json(options.json))
      std::cout << text::json_text(nlohmann::json{{"retried", retried}})
                << '\n';
    else if (retried == 0)
      std::cout << "no FAILED rows: nothing to retry\n";
    else
      std::cout << "retried " << rows(retried)
                << ": back to PENDING with attempts reset\n";
    return exit_ok;
  }
  // An id named twice is one row: count distinct ids, so `retry a a` is one
  // row retried and `retry x x` (unknown) is nothing done, not partly.
  std::set<std::string> distinct(options.event_ids.begin(),
                                 options.event_ids.end());
  auto refused = outbox->retry(options.event_ids, now);
  std::set<std::string> refused_ids(refused.begin(), refused.end());
  auto retried = distinct.size() - refused_ids.size();
  if (prints_json(options.json))
    std::cout << text::json_text(
                     nlohmann::json{{"retried", retried}, {"refused", refused}})
              << '\n';
  else if (retried > 0)
    std::cout << "retried " << rows(retried)
              << ": back to PENDING with attempts reset\n";
  for (const auto& id : refused)
    std::cerr << "outbox retry: " << text::escaped(id)
              << " is not a FAILED outbox row (unknown event_id, or not "
                 "failed); left unchanged\n";
  if (refused.empty())
    return exit_ok;
  // Refused ids change nothing; the others are committed: 2 only when
  // nothing was retried, else "partly done".
  if (retried == 0) {
    std::cerr << "outbox retry: nothing was retried\n";
    return exit_usage;
  }
  std::cerr << "outbox retry: partly done: " << rows(retried) << " retried, "
            << refused.size() << " refused\n";
  return exit_partial;
}

void add_flags(CLI::App& command, retry_options& options) {
  command.add_option("event_ids", options.event_ids, "FAILED rows to retry");
  command.add_flag("--all-failed", options.all_failed,
                   "retry every FAILED row");
  add_json_flag(command, options.json);
}

} // namespace

void add_retry_command(CLI::App& app, command_action& action) {
  add_command<retry_options>(
      app, action,
      {"retry", "Put FAILED outbox rows back to PENDING (attempts reset)",
       retry, add_flags});
}

} // namespace outbox::cli
