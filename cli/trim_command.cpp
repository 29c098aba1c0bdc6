// `outbox trim --processed-older-than DURATION`: forgets consumers' dedup
// records that no delivery can need any more, keeping `outbox verify` true.

#include "audit/dedup_trim.hpp"
#include "audit/sink_trim.hpp"
#include "audit/trim_rule.hpp"
#include "broker/connection.hpp"
#include "broker/server_time.hpp"
#include "cli/command_registration.hpp"
#include "cli/commands.hpp"
#include "cli/common_options.hpp"
#include "cli/duration.hpp"
#include "cli/exit_codes.hpp"
#include "cli/keyspace_check.hpp"
#include "cli/retention_flags.hpp"
#include "sink/sink.hpp"
#include "text/json_text.hpp"
#include "text/plural.hpp"
#include "text/terminal_text.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <exception>
#include <iostream>
#include <memory>
#include <string>

namespace outbox::cli {

namespace {

int trim(const retention_options& options) {
  auto older_than = retention_age(options);
  if (!older_than)
    return exit_usage;
  auto settings = resolve_settings(options.common);
  auto floor = settings.lease.redelivery_window();
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
  audit::sink_trim_totals sink_totals;
  const auto& sink_location = settings.consumer.sink;
  auto batch = static_cast<std::size_t>(options.batch);
  try {
    audit::trim_delivered(*db, redis, settings.broker, cutoff, batch, totals);
    // Redis's records first: a sink's row goes only once its record did.
    if (!sink_location.empty()) {
      sink::sink_target target;
      target.location = sink_location;
      target.busy_timeout_ms = settings.db.busy_timeout_ms;
      auto sink = sink::open_sink(target, settings.key_prefix, {});
      audit::trim_sink_rows(*db, redis, settings.broker, *sink, cutoff, batch,
                            sink_totals);
    }
  } catch (const std::exception& e) {
    // Each script call and each page of the sink commits on its own: after
    // some, this is partly done (a rerun goes on), before any the plain
    // failure.
    if (totals.batches == 0 && sink_totals.batches == 0)
      throw;
    std::cerr << "outbox trim: " << text::escaped(e.what()) << '\n'
              << "outbox trim: partly done: stopped after "
              << text::plural(totals.batches + sink_totals.batches, "batch",
                              "batches")
              << " (" << totals.trimmed << " dedup records and "
              << sink_totals.trimmed
              << " sink inbox rows trimmed); run it again to finish\n";
    return exit_partial;
  }

  if (options.json) {
    nlohmann::json out{{"trimmed", totals.trimmed},
                       {"scanned", totals.scanned},
                       {"kept_young", totals.kept_young},
                       {"kept_queued", totals.kept_queued},
                       {"kept_unpublished", totals.kept_unpublished},
                       {"kept_other", totals.kept_other},
                       {"batches", totals.batches},
                       {"cutoff", cutoff}};
    if (!sink_location.empty())
      out["sink"] = {{"trimmed", sink_totals.trimmed},
                     {"scanned", sink_totals.scanned},
                     {"kept_recorded", sink_totals.kept_recorded},
                     {"kept_uncovered", sink_totals.kept_uncovered},
                     {"kept_queued", sink_totals.kept_queued},
                     {"kept_unpublished", sink_totals.kept_unpublished},
                     {"kept_other", sink_totals.kept_other},
                     {"batches", sink_totals.batches}};
    std::cout << text::json_text(out) << '\n';
  } else {
    std::cout << "trimmed " << totals.trimmed << " of " << totals.scanned
              << " dedup records (cutoff " << format_utc(cutoff) << ") in "
              << totals.batches << " batches; kept " << totals.kept_young
              << " younger, " << totals.kept_queued << " still queued, "
              << totals.kept_unpublished << " whose row is not PUBLISHED "
              << "before the cutoff, " << totals.kept_other << " other\n";
    if (!sink_location.empty())
      std::cout << "trimmed " << sink_totals.trimmed << " of "
                << sink_totals.scanned << " older sink inbox rows; kept "
                << sink_totals.kept_recorded << " still recorded in Redis, "
                << sink_totals.kept_uncovered
                << " Redis's applied seqs do not cover, "
                << sink_totals.kept_queued << " still queued, "
                << sink_totals.kept_unpublished
                << " whose row is not PUBLISHED before the cutoff, "
                << sink_totals.kept_other << " other\n";
  }
  return exit_ok;
}

void add_flags(CLI::App& command, retention_options& options) {
  options.batch = audit::default_trim_batch;
  add_retention_flags(command, options, "--processed-older-than",
                      "DURATION: 500ms, 30s, 15m, 12h, 7d; at least "
                      "lease.ttl_ms x lease.max_attempts",
                      "records per script call (default " +
                          std::to_string(audit::default_trim_batch) +
                          ", 1 to " + std::to_string(max_batch) + ")");
}

} // namespace

void add_trim_command(CLI::App& app, command_action& action) {
  add_command<retention_options>(
      app, action,
      {"trim",
       "Delete consumers' dedup records (Redis `processed`) applied longer ago "
       "than DURATION whose event can no longer be delivered",
       trim, add_flags});
}

} // namespace outbox::cli
