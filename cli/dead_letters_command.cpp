// `outbox dead-letters [--json]` lists the dead-letter list;
// `outbox dead-letters replay EVENT_ID... | --all` puts entries back on
// their queues once the cause of their failure is fixed; `drop`
// (dead_letters_drop.cpp) gives up on them with a recorded decision.

#include "broker/connection.hpp"
#include "broker/dead_letters.hpp"
#include "broker/dropped_dead_letters.hpp"
#include "broker/replay_partitions.hpp"
#include "cli/command_registration.hpp"
#include "cli/commands.hpp"
#include "cli/common_options.hpp"
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
#include <memory>
#include <string>
#include <vector>

namespace outbox::cli {

namespace {

using json = nlohmann::json;

/// Widths of the table's cut columns (the JSON has the whole values).
constexpr std::size_t id_width = 40;
constexpr std::size_t reason_width = 60;

/// Shown for a value the entry does not have (or not readably).
const std::string absent = "-";

template <class T>
json or_null(const std::optional<T>& value) {
  return value ? json(*value) : json(nullptr);
}

json or_null(const std::string& text) {
  return text.empty() ? json(nullptr) : json(text);
}

json to_json(const broker::dead_letter& d) {
  json extra = json::object();
  for (const auto& [name, text] : d.extra)
    extra[name] = json::parse(text, nullptr, false);
  bool readable = d.record_problem.empty();
  return {
      {"index", d.index},
      {"event_id", or_null(d.event_id)},
      {"aggregate_id", or_null(d.aggregate_id)},
      {"seq", or_null(d.seq)},
      {"event_type", or_null(d.event_type)},
      {"trace_id", or_null(d.trace_id)},
      {"size", readable ? json(d.size) : json(nullptr)},
      {"truncated", readable ? json(d.truncated) : json(nullptr)},
      {"reason", readable ? json(d.reason) : json(nullptr)},
      {"entry", readable ? json(d.entry) : json(nullptr)},
      {"extra", extra},
      {"replayable", d.replayable()},
      {"not_replayable", or_null(d.not_replayable)},
      {"malformed_record", or_null(d.record_problem)},
      {"record", readable ? json(nullptr) : json(broker::to_utf8(d.record))}};
}

std::string cell(const std::optional<std::string>& value) {
  return value ? fit(*value, id_width) : absent;
}

void print_letters(const std::vector<broker::dead_letter>& letters) {
  text_table table{{"INDEX", "EVENT_ID", "AGGREGATE_ID", "SEQ", "EVENT_TYPE",
                    "TRACE", "SIZE", "TRUNCATED", "REPLAYABLE", "REASON"}};
  for (const auto& d : letters) {
    bool readable = d.record_problem.empty();
    table.add_row(
        {std::to_string(d.index), cell(d.event_id), cell(d.aggregate_id),
         d.seq ? std::to_string(*d.seq) : absent, cell(d.event_type),
         d.trace_id.value_or(absent),
         readable ? std::to_string(d.size) : absent,
         readable ? (d.truncated ? "yes" : "no") : absent,
         d.replayable() ? "yes" : "no",
         fit(readable ? d.reason : "malformed record: " + d.record_problem,
             reason_width)});
  }
  std::cout << table.render();
}

int list(const dead_letters_options& options) {
  auto settings = resolve_settings(options.common);
  if (auto stop = check_keyspace_if_database(settings, "outbox dead-letters"))
    return *stop;
  broker::connection redis{settings.redis};
  auto letters = broker::read_dead_letters(redis, settings.broker);
  // What `drop` gave up on is gone from the list; its count says the list
  // is not the whole story.
  auto dropped = broker::count_dropped_dead_letters(redis, settings.broker);
  if (options.json) {
    json out{{"dead_letters", json::array()},
             {"count", letters.size()},
             {"dropped", dropped}};
    for (const auto& d : letters)
      out["dead_letters"].push_back(to_json(d));
    std::cout << text::json_text(out) << '\n';
    return exit_ok;
  }
  std::string dropped_note =
      dropped == 0
          ? ""
          : " (" + text::plural(dropped, "drop decision") + " kept in " +
                text::escaped(settings.broker.dead_letter_dropped()) + ")";
  if (letters.empty()) {
    std::cout << "no dead-lettered entries" << dropped_note << "\n";
    return exit_ok;
  }
  print_letters(letters);
  std::size_t replayable = 0;
  for (const auto& d : letters)
    replayable += d.replayable() ? 1 : 0;
  std::cout << text::plural(static_cast<std::int64_t>(letters.size()),
                            "dead-lettered entry", "dead-lettered entries")
            << ", " << replayable
            << " replayable once the cause is fixed (outbox dead-letters "
               "replay EVENT_ID... or --all; --json says why the others "
               "are not), or to drop (outbox dead-letters drop EVENT_ID... "
               "--reason TEXT)"
            << dropped_note << "\n";
  return exit_ok;
}

json refusals_json(const std::vector<broker::replay_refusal>& refusals) {
  auto out = json::array();
  for (const auto& r : refusals)
    out.push_back({{"event_id", or_null(r.event_id)},
                   {"index", or_null(r.index)},
                   {"why", r.why}});
  return out;
}

/// "EVENT_ID (index N)", "record N" or "EVENT_ID", for a message line.
std::string named(const broker::replay_refusal& r) {
  std::string text = r.event_id.empty() ? "" : fit(r.event_id, 80);
  if (r.index)
    text += (text.empty() ? "record " : " (index ") + std::to_string(*r.index) +
            (text.empty() ? "" : ")");
  return text;
}

void print_replayed(const broker::replay_result& result) {
  if (result.replayed.empty()) {
    std::cout << "nothing replayed\n";
  } else {
    text_table table{
        {"INDEX", "EVENT_ID", "AGGREGATE_ID", "SEQ", "EVENT_TYPE", "QUEUE"}};
    for (const auto& p : result.replayed) {
      const auto& d = p.letter;
      table.add_row({std::to_string(d.index), cell(d.event_id),
                     cell(d.aggregate_id), std::to_string(d.seq.value_or(0)),
                     cell(d.event_type), p.queue});
    }
    std::cout << table.render() << "replayed "
              << text::plural(static_cast<std::int64_t>(result.replayed.size()),
                              "entry", "entries")
              << " to the head of their queues\n";
  }
  if (!result.skipped.empty()) {
    text_table table{{"INDEX", "EVENT_ID", "LEFT IN THE LIST BECAUSE"}};
    for (const auto& s : result.skipped)
      table.add_row({s.index ? std::to_string(*s.index) : absent,
                     s.event_id.empty() ? absent : fit(s.event_id, id_width),
                     fit(s.why, 80)});
    std::cout << '\n' << table.render();
  }
}

int replay(const dead_letters_options& options) {
  if (options.all == !options.event_ids.empty()) {
    std::cerr << "outbox dead-letters replay: give either EVENT_ID... or "
                 "--all\n";
    return exit_usage;
  }
  auto settings = resolve_settings(options.common);
  if (auto stop = check_keyspace_if_database(
          settings, "outbox dead-letters replay", keyspace_use::read))
    return *stop;
  broker::connection redis{settings.redis};
  if (auto partitions = broker::partitions_for_replay(redis, settings.broker);
      !partitions.agreed()) {
    std::cerr << "outbox dead-letters replay: broker.partitions is "
              << partitions.ours << " here, but " << *partitions.recorded
              << " is recorded in Redis ("
              << settings.broker.partitions_record()
              << "); replay with --config naming " << *partitions.recorded
              << " partitions: nothing was replayed\n";
    return exit_usage;
  }
  // Stamped once nothing can refuse the replay, just before it writes.
  if (auto stop = check_keyspace_if_database(
          settings, "outbox dead-letters replay", keyspace_use::write))
    return *stop;
  auto result = broker::replay_dead_letters(redis, settings.broker,
                                            {options.event_ids, options.all});
  if (options.json) {
    json replayed = json::array();
    for (const auto& p : result.replayed)
      replayed.push_back({{"index", p.letter.index},
                          {"event_id", or_null(p.letter.event_id)},
                          {"aggregate_id", or_null(p.letter.aggregate_id)},
                          {"seq", or_null(p.letter.seq)},
                          {"event_type", or_null(p.letter.event_type)},
                          {"queue", p.queue}});
    std::cout << text::json_text(
                     json{{"replayed", replayed},
                          {"count", result.replayed.size()},
                          {"skipped", refusals_json(result.skipped)},
                          {"refused", refusals_json(result.refused)}})
              << '\n';
  } else if (result.refused.empty()) {
    print_replayed(result);
  }
  for (const auto& r : result.refused)
    std::cerr << "outbox dead-letters replay: " << named(r) << ": "
              << text::escaped(r.why) << '\n';
  if (!result.refused.empty()) {
    std::cerr << "outbox dead-letters replay: nothing was replayed\n";
    return exit_usage;
  }
  // --all leaves what cannot go back: the list is not empty afterwards, so
  // this is not "done"; partly done when some went back, else nothing was.
  if (!result.skipped.empty()) {
    std::cerr << "outbox dead-letters replay: "
              << text::plural(static_cast<std::int64_t>(result.skipped.size()),
                              "record")
              << " cannot be replayed and stay in the list";
    if (result.replayed.empty()) {
      std::cerr << ": nothing was replayed\n";
      return exit_usage;
    }
    std::cerr << ": partly done\n";
    return exit_partial;
  }
  return exit_ok;
}

int dead_letters(const dead_letters_options& options) {
  apply_log_level(options.common.log_level);
  if (options.drop)
    return drop_dead_letters(options);
  return options.replay ? replay(options) : list(options);
}

void add_flags(CLI::App& command, dead_letters_options& options) {
  command.add_flag("--json", options.json,
                   "one JSON object on stdout, values in full");
  auto* replay = command.add_subcommand(
      "replay", "Put dead-lettered entries back at the head of their "
                "queues and remove their records, atomically");
  replay->add_option("event_ids", options.event_ids,
                     "event_ids of the entries to replay (every record "
                     "of each)");
  replay->add_flag("--all", options.all,
                   "replay every replayable record, leaving the others "
                   "(reported) in the list");
  // --json and the common options may also come after `replay`.
  replay->fallthrough();
  add_drop_subcommand(command, options);
}

void read_parsed(const CLI::App& command, dead_letters_options& options) {
  options.replay = command.get_subcommand("replay")->parsed();
  options.drop = command.get_subcommand("drop")->parsed();
}

} // namespace

void add_dead_letters_command(CLI::App& app, command_action& action) {
  add_command<dead_letters_options>(
      app, action,
      {"dead-letters",
       "List the dead-letter list, oldest first (replay: put entries back on "
       "their queues; drop: give up on them, the decision recorded)",
       dead_letters, add_flags, read_parsed});
}

} // namespace outbox::cli
