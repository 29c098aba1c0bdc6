// `outbox dead-letters drop EVENT_ID... | --malformed [--reason TEXT]`: an
// operator's decision that dead-lettered events will not be applied, kept
// in Redis for `outbox verify` (broker/dead_letter_drop.hpp).

#include "broker/connection.hpp"
#include "broker/dead_letter_drop.hpp"
#include "cli/dead_letters_options.hpp"
#include "cli/exit_codes.hpp"
#include "cli/keyspace_check.hpp"
#include "cli/text_table.hpp"
#include "text/json_text.hpp"
#include "text/plural.hpp"
#include "text/terminal_text.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <iostream>
#include <string>

namespace outbox::cli {

namespace {

/// The operator's words are kept with every decision, for good: a line or
/// two, not a file.
constexpr std::size_t max_drop_reason_bytes = 1024;

/// Widths of the table's cut columns (the JSON has the whole values).
constexpr std::size_t drop_id_width = 40;
constexpr std::size_t drop_reason_width = 60;

template <class T>
nlohmann::json drop_value(const std::optional<T>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

std::string drop_cell(const std::optional<std::string>& value) {
  return value ? fit(*value, drop_id_width) : "-";
}

nlohmann::json drop_json(const broker::drop_plan& plan,
                         const broker::keys& names) {
  auto dropped = nlohmann::json::array();
  for (const auto& d : plan.decisions)
    for (const auto& r : d.records)
      dropped.push_back({{"index", r.index},
                         {"event_id", drop_value(r.event_id)},
                         {"aggregate_id", drop_value(r.aggregate_id)},
                         {"seq", drop_value(r.seq)},
                         {"event_type", drop_value(r.event_type)},
                         {"field", d.field}});
  return {{"dropped", dropped},
          {"count", plan.records()},
          {"decisions", plan.decisions.size()},
          {"key", names.dead_letter_dropped()},
          {"unknown", plan.unknown}};
}

void print_dropped(const broker::drop_plan& plan, const broker::keys& names) {
  if (plan.decisions.empty()) {
    std::cout << "nothing dropped\n";
    return;
  }
  text_table table{{"INDEX", "EVENT_ID", "AGGREGATE_ID", "SEQ", "EVENT_TYPE",
                    "DEAD-LETTERED BECAUSE"}};
  for (const auto& d : plan.decisions)
    for (const auto& r : d.records) {
      bool readable = r.record_problem.empty();
      table.add_row(
          {std::to_string(r.index), drop_cell(r.event_id),
           drop_cell(r.aggregate_id), r.seq ? std::to_string(*r.seq) : "-",
           drop_cell(r.event_type),
           fit(readable ? r.reason : "malformed record: " + r.record_problem,
               drop_reason_width)});
    }
  std::cout << table.render() << "dropped "
            << text::plural(static_cast<std::int64_t>(plan.records()), "record")
            << "; "
            << text::plural(static_cast<std::int64_t>(plan.decisions.size()),
                            "decision")
            << " recorded in " << text::escaped(names.dead_letter_dropped())
            << '\n';
}

} // namespace

int drop_dead_letters(const dead_letters_options& options) {
  if (options.drop_ids.empty() && !options.malformed) {
    std::cerr << "outbox dead-letters drop: give EVENT_ID..., --malformed, "
                 "or both\n";
    return exit_usage;
  }
  if (options.reason.size() > max_drop_reason_bytes) {
    std::cerr << "outbox dead-letters drop: --reason is "
              << options.reason.size() << " bytes, at most "
              << max_drop_reason_bytes << '\n';
    return exit_usage;
  }
  auto settings = resolve_settings(options.common);
  if (auto stop = check_keyspace_if_database(
          settings, "outbox dead-letters drop", keyspace_use::read))
    return *stop;
  broker::connection redis{settings.redis};
  // Stamped once nothing can refuse the drop, just before it writes.
  if (auto stop = check_keyspace_if_database(
          settings, "outbox dead-letters drop", keyspace_use::write))
    return *stop;
  auto plan = broker::drop_dead_letters(
      redis, settings.broker,
      {options.drop_ids, options.malformed, options.reason});
  if (options.json)
    std::cout << text::json_text(drop_json(plan, settings.broker)) << '\n';
  else if (plan.unknown.empty())
    print_dropped(plan, settings.broker);
  if (plan.unknown.empty())
    return exit_ok;
  for (const auto& id : plan.unknown)
    std::cerr << "outbox dead-letters drop: " << text::escaped(fit(id, 80))
              << ": no record of the dead-letter list has it\n";
  std::cerr << "outbox dead-letters drop: nothing was dropped\n";
  return exit_usage;
}

void add_drop_subcommand(CLI::App& command, dead_letters_options& options) {
  auto* drop = command.add_subcommand(
      "drop", "Give up on dead-lettered events: remove their records and "
              "record the decision (with --reason), atomically");
  drop->add_option("event_ids", options.drop_ids,
                   "event_ids of the entries to drop (every record of each)");
  drop->add_flag("--malformed", options.malformed,
                 "also drop every record without a readable event_id "
                 "(malformed), which cannot be named");
  drop->add_option("--reason", options.reason,
                   "why, kept with each decision (at most 1024 bytes)");
  // --json and the common options may also come after `drop`.
  drop->fallthrough();
}

} // namespace outbox::cli
