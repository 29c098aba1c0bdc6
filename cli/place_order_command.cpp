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
#include <memory>
#include <string>
#include <vector>

namespace outbox::cli {

namespace {

struct place_order_options {
  common_options common;
  std::string sku;
  std::string qty;
  std::string request_id;
  bool has_request_id = false;
  std::vector<std::string> headers;
  bool json = false;
};

/// Parses qty strictly: digits only, so "2.5", "1e3", "-1" and " 3" are
/// rejected with a message instead of being truncated or wrapped.
std::int64_t parse_qty(const std::string& text) {
  bool digits = !text.empty() && text.size() <= 18 &&
                text.find_first_not_of("0123456789") == std::string::npos;
  if (!digits || std::stoll(text) < 1 || std::stoll(text) > storage::max_qty)
    throw storage::store_error(storage::store_errc::invalid_input,
                               "--qty must be a positive integer no larger "
                               "than " +
                                   std::to_string(storage::max_qty) +
                                   " (got '" + text + "')");
  return std::stoll(text);
}

int place_order(const place_order_options& options) {
  apply_log_level(options.common.log_level);
  storage::order_request request;
  request.sku = options.sku;
  request.qty = parse_qty(options.qty);
  request.headers = text::headers_text(parse_header_flags(options.headers));
  // Without a key of the caller's, one made here: a COMMIT whose answer is
  // lost can then be looked up, and the command run again with it.
  request.request_id = options.has_request_id
                           ? options.request_id
                           : "place-order-" + storage::event_id_source{}.next();
  // Validate before touching the database: bad input writes nothing.
  if (auto problem = storage::validate(request))
    throw storage::store_error(storage::store_errc::invalid_input, *problem);

  auto settings = resolve_settings(options.common);
  storage::prepare_database_folder(settings.db);
  auto db = storage::connect(settings.db, storage::open_mode::migrated);
  auto placed = naming_the_retry(
      [&] {
        return db->orders()->place_order(request, storage::wall_clock_now());
      },
      "--request-id", *request.request_id, "the order was already placed",
      "places it once");
  if (placed.result == storage::placed_order::outcome::conflict) {
    std::cerr << "outbox: idempotency conflict: request_id '"
              << text::escaped(options.request_id) << "' already placed order "
              << placed.order_id
              << " with other parameters; nothing was written\n";
    return exit_conflict;
  }
  bool replayed = placed.result == storage::placed_order::outcome::replayed;
  if (prints_json(options.json)) {
    nlohmann::json out{
        {"order_id", placed.order_id},         {"event_id", placed.event_id},
        {"aggregate_id", placed.aggregate_id}, {"replayed", replayed},
        {"request_id", *request.request_id},
    };
    std::cout << text::json_text(out) << '\n';
  } else if (replayed) {
    std::cout << "order " << placed.order_id << " was already placed with "
              << "request_id '" << text::escaped(options.request_id)
              << "' (aggregate " << text::escaped(placed.aggregate_id)
              << ", event " << text::escaped(placed.event_id)
              << "): nothing new was written\n";
  } else {
    std::cout << "placed order " << placed.order_id << " ("
              << text::escaped(placed.aggregate_id) << ", " << request.qty
              << " x " << text::escaped(request.sku) << "): its OrderPlaced "
              << "event " << text::escaped(placed.event_id)
              << " waits in the outbox for a relay\n";
  }
  return exit_ok;
}

void add_flags(CLI::App& command, place_order_options& options) {
  command.add_option("--sku", options.sku, "stock keeping unit (1-64 chars)")
      ->required();
  command.add_option("--qty", options.qty, "quantity, a positive integer")
      ->required();
  command.add_option("--request-id", options.request_id,
                     "idempotency key: a retry with the same key and "
                     "parameters returns the original order");
  add_header_flag(command, options.headers, "a header of the OrderPlaced event",
                  "the order");
  add_json_flag(command, options.json);
}

void read_parsed(const CLI::App& command, place_order_options& options) {
  options.has_request_id = command.count("--request-id") > 0;
}

} // namespace

void add_place_order_command(CLI::App& app, command_action& action) {
  add_command<place_order_options>(
      app, action,
      {"place-order",
       "Place one order: the order row and its OrderPlaced outbox row commit "
       "in one transaction. Prints a sentence on a terminal, else (or with "
       "--json) JSON with order_id, event_id, aggregate_id, replayed",
       place_order, add_flags, read_parsed});
}

} // namespace outbox::cli
