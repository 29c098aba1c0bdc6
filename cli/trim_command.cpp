// `outbox trim --processed-older-than DURATION`: forgets consumers' dedup
// records that no delivery can need any more, keeping `outbox verify` true.

#include "broker/connection.hpp"
#include "broker/inbox_trim.hpp"
#include "broker/queued_events.hpp"
#include "cli/commands.hpp"
#include "cli/common_options.hpp"
#include "cli/duration.hpp"
#include "cli/exit_codes.hpp"
#include "storage/ledger.hpp"

#include <CLI/CLI.hpp>
#include <SQLiteCpp/Database.h>
#include <hiredis/hiredis.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_set>
#include <vector>

namespace outbox::cli {

namespace {

struct trim_options {
  common_options common;
  std::string older_than;
  int batch = 1000;
  bool json = false;
};

/// What the whole trim did; every record looked at lands in one count.
struct trim_totals {
  std::int64_t scanned = 0;
  std::int64_t trimmed = 0;
  /// Applied at or after the cutoff.
  std::int64_t kept_young = 0;
  /// Its event still waits in a queue or processing list.
  std::int64_t kept_queued = 0;
  /// Its row is not PUBLISHED (a FAILED row may be retried and delivered
  /// again) or was published after the cutoff.
  std::int64_t kept_unpublished = 0;
  /// Not a record the inbox script wrote, or changed under the trim.
  std::int64_t kept_other = 0;
  std::int64_t batches = 0;
};

/// Redis's clock in ms: records carry Redis TIME ("at"), so the cutoff is
/// taken on the same clock.
std::int64_t redis_now_ms(broker::connection& redis) {
  auto now = redis.command({"TIME"});
  if (now->type != REDIS_REPLY_ARRAY || now->elements != 2)
    throw std::runtime_error("unexpected reply to TIME");
  return std::stoll(broker::reply_text(*now->element[0])) * 1000 +
         std::stoll(broker::reply_text(*now->element[1])) / 1000;
}

/// The record's "at" (when the inbox applied it), or -1 if it has none.
std::int64_t applied_at(const std::string& record) {
  auto j = nlohmann::json::parse(record, nullptr, false);
  if (!j.is_object() || !j.contains("at") || !j["at"].is_number_integer())
    return -1;
  return j["at"].get<std::int64_t>();
}

/// Trims one HSCAN page: old records whose event can no longer be delivered
/// (row purged, or PUBLISHED before the cutoff, and not queued).
void trim_page(const std::vector<std::pair<std::string, std::string>>& page,
               std::int64_t cutoff, int batch, SQLite::Database& db,
               const std::unordered_set<std::string>& queued,
               broker::inbox_trim& trimmer, trim_totals& totals) {
  std::vector<std::string> old;
  for (const auto& [event_id, record] : page) {
    ++totals.scanned;
    auto at = applied_at(record);
    if (at < 0)
      ++totals.kept_other;
    else if (at >= cutoff)
      ++totals.kept_young;
    else if (queued.count(event_id) != 0)
      ++totals.kept_queued;
    else
      old.push_back(event_id);
  }
  auto rows = storage::read_publications(db, old);
  std::vector<std::string> doomed;
  for (std::size_t i = 0; i < old.size(); ++i) {
    const auto& row = rows[i];
    if (row.purged || (row.status == "PUBLISHED" && row.published_at < cutoff))
      doomed.push_back(old[i]);
    else
      ++totals.kept_unpublished;
  }
  for (std::size_t from = 0; from < doomed.size(); from += batch) {
    auto to = std::min(doomed.size(), from + static_cast<std::size_t>(batch));
    auto done =
        trimmer.trim(cutoff, {doomed.begin() + from, doomed.begin() + to});
    totals.trimmed += done.trimmed;
    totals.kept_other += done.kept;
    ++totals.batches;
  }
}

int trim(const trim_options& options) {
  apply_log_level(options.common.log_level);
  auto older_than =
      duration_flag("trim", "--processed-older-than", options.older_than);
  if (!older_than)
    return exit_usage;
  if (options.batch < 1) {
    std::cerr << "outbox trim: --batch must be at least 1, got "
              << options.batch << '\n';
    return exit_usage;
  }
  auto settings = resolve_settings(options.common);
  // A relay that lost its lease may still be about to publish a row it
  // claimed: no record younger than every lease a row can go through.
  auto floor = settings.lease.ttl * settings.lease.max_attempts;
  if (*older_than < floor) {
    std::cerr << "outbox trim: --processed-older-than " << options.older_than
              << " is shorter than the redelivery window (lease.ttl_ms x "
                 "lease.max_attempts = "
              << format_duration(floor) << ")\n";
    return exit_usage;
  }
  auto db = open_existing_database(settings.db);
  broker::connection redis{settings.redis};
  const auto& names = settings.broker;
  auto cutoff = redis_now_ms(redis) - *older_than;
  auto queued = broker::queued_event_ids(redis, names);
  broker::inbox_trim trimmer{redis, names};

  // HSCAN returns every record present for the whole scan, whatever is
  // deleted meanwhile; pages stay small so Redis is never blocked for long.
  trim_totals totals;
  std::string cursor = "0";
  do {
    auto reply = redis.command({"HSCAN", names.processed, cursor, "COUNT",
                                std::to_string(options.batch)});
    if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 2)
      throw std::runtime_error("unexpected HSCAN reply for " + names.processed);
    cursor = broker::reply_text(*reply->element[0]);
    const auto& fields = *reply->element[1];
    std::vector<std::pair<std::string, std::string>> page;
    for (std::size_t i = 0; i + 1 < fields.elements; i += 2)
      page.emplace_back(broker::reply_text(*fields.element[i]),
                        broker::reply_text(*fields.element[i + 1]));
    trim_page(page, cutoff, options.batch, *db, queued, trimmer, totals);
  } while (cursor != "0");

  if (options.json) {
    std::cout << nlohmann::json{{"trimmed", totals.trimmed},
                                {"scanned", totals.scanned},
                                {"kept_young", totals.kept_young},
                                {"kept_queued", totals.kept_queued},
                                {"kept_unpublished", totals.kept_unpublished},
                                {"kept_other", totals.kept_other},
                                {"batches", totals.batches},
                                {"cutoff", cutoff}}
                     .dump()
              << '\n';
  } else {
    std::cout << "trimmed " << totals.trimmed << " of " << totals.scanned
              << " dedup records applied before " << cutoff << " ms in "
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
                      "records per script call (default 1000, at least 1)");
  command->add_flag("--json", options->json, "one JSON object on stdout");
  add_common_options(*command, options->common);
  command->callback(
      [options, &action] { action = [options] { return trim(*options); }; });
}

} // namespace outbox::cli
