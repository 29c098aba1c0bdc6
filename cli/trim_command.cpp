// `outbox trim --processed-older-than DURATION`: forgets consumers' dedup
// records that no delivery can need any more, keeping `outbox verify` true.

#include "audit/dedup_trim.hpp"
#include "audit/trim_rule.hpp"
#include "broker/connection.hpp"
#include "broker/server_time.hpp"
#include "cli/batch_flag.hpp"
#include "cli/commands.hpp"
#include "cli/common_options.hpp"
#include "cli/duration.hpp"
#include "cli/exit_codes.hpp"
#include "cli/keyspace_check.hpp"
#include "text/json_text.hpp"
#include "text/terminal_text.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <exception>
#include <iostream>
#include <memory>
#include <string>

namespace outbox::cli {

namespace {

struct trim_options {
  common_options common;
  std::string older_than;
  int batch = 1000;
  bool json = false;
};

int trim(const trim_options& options) {
  apply_log_level(options.common.log_level);
  auto older_than =
      duration_flag("trim", "--processed-older-than", options.older_than);
  if (!older_than)
    return exit_usage;
  if (!batch_in_range("trim", options.batch))
    return exit_usage;
  auto settings = resolve_settings(options.common);
  auto floor = audit::redelivery_window(settings.lease);
  if (*older_than < floor) {
    std::cerr << "outbox trim: --processed-older-than "
              << text::escaped(options.older_than)
              << " is shorter than the redelivery window (lease.ttl_ms x "
                 "lease.max_attempts = "
              << format_duration(floor) << ")\n";
    return exit_usage;
  }
  auto db = open_existing_database(settings.db);
  if (auto stop =
          check_keyspace(*db, settings, "outbox trim", keyspace_use::write))
    return *stop;
  broker::connection redis{settings.redis};
  auto cutoff = broker::server_time_ms(redis) - *older_than;

  broker::trim_totals totals;
  try {
    audit::trim_delivered(*db, redis, settings.broker, cutoff,
                          static_cast<std::size_t>(options.batch), totals);
  } catch (const std::exception& e) {
    // Each script call commits on its own: after some, this is partly
    // done (a rerun goes on), before any the plain failure.
    if (totals.batches == 0)
      throw;
    std::cerr << "outbox trim: " << text::escaped(e.what()) << '\n'
              << "outbox trim: partly done: stopped after " << totals.batches
              << (totals.batches == 1 ? " batch (" : " batches (")
              << totals.trimmed
              << " dedup records trimmed); run it again to finish\n";
    return exit_partial;
  }

  if (options.json) {
    std::cout << text::json_text(nlohmann::json{
                     {"trimmed", totals.trimmed},
                     {"scanned", totals.scanned},
                     {"kept_young", totals.kept_young},
                     {"kept_queued", totals.kept_queued},
                     {"kept_unpublished", totals.kept_unpublished},
                     {"kept_other", totals.kept_other},
                     {"batches", totals.batches},
                     {"cutoff", cutoff}})
              << '\n';
  } else {
    std::cout << "trimmed " << totals.trimmed << " of " << totals.scanned
              << " dedup records (cutoff " << format_utc(cutoff) << ") in "
              << totals.batches << " batches; kept " << totals.kept_young
              << " younger, " << totals.kept_queued << " still queued, "
              << totals.kept_unpublished << " whose row is not PUBLISHED "
              << "before the cutoff, " << totals.kept_other << " other\n";
  }
  return exit_ok;
}

} // namespace

void add_trim_command(CLI::App& app, command_action& action) {
  auto options = std::make_shared<trim_options>();
  auto* command = app.add_subcommand(
      "trim", "Delete consumers' dedup records (Redis `processed`) applied "
              "longer ago than DURATION whose event can no longer be "
              "delivered");
  command
      ->add_option("--processed-older-than", options->older_than,
                   "DURATION: 500ms, 30s, 15m, 12h, 7d; at least lease.ttl_ms "
                   "x lease.max_attempts")
      ->required();
  command->add_option("--batch", options->batch,
                      "records per script call (default 1000, 1 to 10000)");
  command->add_flag("--json", options->json, "one JSON object on stdout");
  add_common_options(*command, options->common);
  command->callback(
      [options, &action] { action = [options] { return trim(*options); }; });
}

} // namespace outbox::cli
