// `outbox append`: one event of the user's own, for any aggregate and type,
// written to the outbox the way the writer writes follow-ups: its seq
// allocated under the aggregate's lock in the same transaction, idempotent
// on its event_id.

#include "cli/command_flags.hpp"
#include "cli/command_registration.hpp"
#include "cli/commands.hpp"
#include "cli/common_options.hpp"
#include "cli/exit_codes.hpp"
#include "cli/header_flags.hpp"
#include "cli/output_mode.hpp"
#include "cli/unknown_outcome.hpp"
#include "storage/database.hpp"
#include "storage/db_folder.hpp"
#include "storage/event_ids.hpp"
#include "storage/order_store.hpp"
#include "storage/store_error.hpp"
#include "text/event_headers.hpp"
#include "text/json_text.hpp"
#include "text/terminal_text.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <iostream>
#include <string>
#include <vector>

namespace outbox::cli {

namespace {

struct append_options {
  common_options common;
  std::string aggregate;
  std::string type;
  std::string payload;
  std::string event_id;
  std::vector<std::string> headers;
  bool json = false;
};

/// A payload the relays would refuse to publish (over
/// broker.max_entry_bytes with the entry around it) would end FAILED: it is
/// refused here, where the caller can still do something about it.
void check_size(const storage::event_request& request,
                const config::settings& settings) {
  // The entry's own fields besides the payload: ids, seq, times, keys.
  constexpr std::size_t envelope = 512;
  auto bytes = request.payload.size() + request.headers.size() +
               request.aggregate_id.size() + request.event_type.size() +
               envelope;
  if (bytes > settings.broker.max_entry_bytes)
    throw storage::store_error(
        storage::store_errc::invalid_input,
        "--payload of " + std::to_string(request.payload.size()) + " bytes" +
            (request.headers.empty()
                 ? std::string{}
                 : " and --header of " +
                       std::to_string(request.headers.size()) + " bytes") +
            " would make a queue entry over broker.max_entry_bytes (" +
            std::to_string(settings.broker.max_entry_bytes) +
            "): the relays would refuse to publish it");
}

int append(const append_options& options) {
  apply_log_level(options.common.log_level);
  storage::event_request request;
  request.aggregate_id = options.aggregate;
  request.event_type = options.type;
  request.payload = options.payload;
  request.headers = text::headers_text(parse_header_flags(options.headers));
  // Without an id of the caller's, one made here: a COMMIT whose answer is
  // lost can then be looked up, and the command run again with it.
  request.event_id = options.event_id.empty()
                         ? storage::event_id_source{}.next()
                         : options.event_id;
  // Validate before touching the database: bad input writes nothing.
  if (auto problem = storage::validate(request))
    throw storage::store_error(storage::store_errc::invalid_input, *problem);
  auto settings = resolve_settings(options.common);
  check_size(request, settings);

  storage::prepare_database_folder(settings.db);
  auto db = storage::connect(settings.db, storage::open_mode::migrated);
  auto appended = naming_the_retry(
      [&] {
        return db->orders()->append_event(request, storage::wall_clock_now());
      },
      "--event-id", request.event_id, "the event was already appended",
      "appends it once");
  if (prints_json(options.json)) {
    std::cout << text::json_text(
                     nlohmann::json{{"event_id", appended.event_id},
                                    {"aggregate_id", appended.aggregate_id},
                                    {"seq", appended.seq},
                                    {"event_type", request.event_type},
                                    {"replayed", appended.replayed}})
              << '\n';
  } else if (appended.replayed) {
    std::cout << "event " << text::escaped(appended.event_id)
              << " was already appended (aggregate "
              << text::escaped(appended.aggregate_id) << ", seq "
              << appended.seq << "): nothing new was written\n";
  } else {
    std::cout << "appended " << text::escaped(request.event_type) << " "
              << text::escaped(appended.event_id) << " to aggregate "
              << text::escaped(appended.aggregate_id) << " as seq "
              << appended.seq << ": it waits in the outbox for a relay\n";
  }
  return exit_ok;
}

void add_flags(CLI::App& command, append_options& options) {
  command
      .add_option("--aggregate", options.aggregate,
                  "the aggregate the event belongs to: its events are "
                  "applied in the order they were appended")
      ->required();
  command.add_option("--type", options.type, "the event type")->required();
  command
      .add_option("--payload", options.payload,
                  "the event's data, a JSON object")
      ->required();
  command.add_option("--event-id", options.event_id,
                     "a UUID: appending it again writes nothing and "
                     "returns the first (default: a new UUIDv7)");
  add_header_flag(command, options.headers,
                  "a header carried with the event to the consumers", "it");
  add_json_flag(command, options.json);
}

} // namespace

void add_append_command(CLI::App& app, command_action& action) {
  add_command<append_options>(
      app, action,
      {"append",
       "Append one event of any type to an aggregate: its seq is allocated "
       "in the same transaction, and it is published like every other. "
       "Prints a sentence on a terminal, else (or with --json) JSON with "
       "event_id, aggregate_id, seq, event_type, replayed",
       append, add_flags});
}

} // namespace outbox::cli
