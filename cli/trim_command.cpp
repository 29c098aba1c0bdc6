// `outbox trim --processed-older-than DURATION`: forgets consumers' dedup
// records that no delivery can need any more, keeping `outbox verify` true.

#include "broker/connection.hpp"
#include "broker/hash_scan.hpp"
#include "broker/inbox_trim.hpp"
#include "broker/queued_events.hpp"
#include "cli/batch_flag.hpp"
#include "cli/commands.hpp"
#include "cli/common_options.hpp"
#include "cli/duration.hpp"
#include "cli/exit_codes.hpp"
#include "cli/keyspace_check.hpp"
#include "storage/ledger.hpp"
#include "text/json_text.hpp"
#include "text/terminal_text.hpp"

#include <CLI/CLI.hpp>
#include <hiredis/hiredis.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <memory>
#include <optional>
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
  /// Not a record the inbox script wrote, no row and no sign of a purge
  /// (another database?), or changed under the trim.
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

/// The event a record names and when it was applied ("at"); nothing for a
/// record the inbox script did not write.
struct parsed_record {
  storage::applied_event event;
  std::int64_t at = 0;
};

std::optional<parsed_record> parse_record(const std::string& event_id,
                                          const std::string& record) {
  auto j = nlohmann::json::parse(record, nullptr, false);
  if (!j.is_object() || !j.contains("at") || !j["at"].is_number_integer() ||
      !j.contains("aggregate_id") || !j["aggregate_id"].is_string() ||
      !j.contains("seq") || !j["seq"].is_number_integer())
    return std::nullopt;
  return parsed_record{{event_id, j["aggregate_id"].get<std::string>(),
                        j["seq"].get<std::int64_t>()},
                       j["at"].get<std::int64_t>()};
}

/// The old records of one HSCAN page whose event can no longer come from
/// the outbox: its row is purged, or PUBLISHED before the cutoff.
std::vector<std::string> delivered_before(const broker::hash_page& page,
                                          std::int64_t cutoff,
                                          storage::database& db,
                                          trim_totals& totals) {
  std::vector<storage::applied_event> old;
  for (const auto& [event_id, record] : page) {
    ++totals.scanned;
    auto parsed = parse_record(event_id, record);
    if (!parsed)
      ++totals.kept_other;
    else if (parsed->at >= cutoff)
      ++totals.kept_young;
    else
      old.push_back(std::move(parsed->event));
  }
  auto rows = db.read_publications(old);
  std::vector<std::string> delivered;
  for (std::size_t i = 0; i < old.size(); ++i) {
    using state = storage::publication::state;
    const auto& row = rows[i];
    if (row.where == state::purged ||
        (row.where == state::present && row.status == "PUBLISHED" &&
         row.published_at < cutoff))
      delivered.push_back(std::move(old[i].event_id));
    else if (row.where == state::present)
      ++totals.kept_unpublished;
    else
      ++totals.kept_other;
  }
  return delivered;
}

/// Records whose event was delivered, gathered from the scan until there
/// are enough to be worth one read of the lists, then trimmed unless a copy
/// still waits. Only these ids are held, never every record scanned.
class candidates {
public:
  candidates(broker::connection& redis, const broker::keys& names,
             std::int64_t cutoff, std::size_t batch, trim_totals& totals)
      : redis_(redis), names_(names), cutoff_(cutoff), batch_(batch),
        // Each read of the lists costs their whole length: with many records
        // to trim, read them once per this many (about 100 bytes each).
        limit_(std::max<std::size_t>(batch, 10000)), trimmer_(redis, names),
        totals_(totals) {}

  void add(std::vector<std::string> ids) {
    for (auto& id : ids) {
      // Returned twice by the scan: counted once.
      if (!ids_.insert(std::move(id)).second)
        --totals_.scanned;
      if (ids_.size() >= limit_)
        flush();
    }
  }

  /// Trims what is gathered. The lists are read after the rows said these
  /// events were delivered: a copy a relay pushed before its ack was read is
  /// in the lists by then. With nothing gathered, they are not read at all.
  void flush() {
    if (ids_.empty())
      return;
    auto queued = broker::queued_among(redis_, names_, ids_);
    std::vector<std::string> doomed;
    for (const auto& id : ids_) {
      if (queued.count(id) != 0)
        ++totals_.kept_queued;
      else
        doomed.push_back(id);
    }
    ids_.clear();
    for (std::size_t from = 0; from < doomed.size(); from += batch_) {
      auto to = std::min(doomed.size(), from + batch_);
      auto done =
          trimmer_.trim(cutoff_, {doomed.begin() + from, doomed.begin() + to});
      totals_.trimmed += done.trimmed;
      // A record the scan returned twice (HSCAN may, while Redis resizes
      // the hash) was counted when first seen and is gone now.
      totals_.kept_other += done.kept - done.gone;
      totals_.scanned -= done.gone;
      ++totals_.batches;
    }
  }

private:
  broker::connection& redis_;
  const broker::keys& names_;
  std::int64_t cutoff_;
  std::size_t batch_;
  std::size_t limit_;
  broker::inbox_trim trimmer_;
  trim_totals& totals_;
  std::unordered_set<std::string> ids_;
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
  // A relay that lost its lease may still be about to publish a row it
  // claimed: no record younger than every lease a row can go through.
  auto floor = settings.lease.ttl * settings.lease.max_attempts;
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
  const auto& names = settings.broker;
  auto cutoff = redis_now_ms(redis) - *older_than;

  // HSCAN returns every record present for the whole scan; pages stay small
  // so Redis is never blocked for long, and each page's rows are read from
  // the outbox before its candidates are checked against the lists.
  trim_totals totals;
  auto batch = static_cast<std::size_t>(options.batch);
  candidates gathered{redis, names, cutoff, batch, totals};
  try {
    broker::scan_hash(
        redis, names.processed, batch, [&](const broker::hash_page& page) {
          gathered.add(delivered_before(page, cutoff, *db, totals));
        });
    gathered.flush();
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
