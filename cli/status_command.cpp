#include "broker/broker_error.hpp"
#include "broker/broker_stats.hpp"
#include "broker/connection.hpp"
#include "cli/commands.hpp"
#include "cli/common_options.hpp"
#include "cli/exit_codes.hpp"
#include "cli/finite_range.hpp"
#include "cli/keyspace_check.hpp"
#include "cli/redis_settings_view.hpp"
#include "cli/stop_signals.hpp"
#include "cli/text_table.hpp"
#include "storage/outbox_store.hpp"
#include "text/json_text.hpp"
#include "text/terminal_text.hpp"

#include <CLI/CLI.hpp>
#include <SQLiteCpp/Database.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace outbox::cli {

namespace {

struct status_options {
  common_options common;
  bool json = false;
  bool watch = false;
  double interval_s = 2;
};

nlohmann::json outbox_json(const storage::outbox_stats& s) {
  nlohmann::json out{{"orders", s.orders},
                     {"by_status", s.by_status},
                     {"oldest_unpublished_age_ms", s.oldest_unpublished_age},
                     {"expired_leases", s.expired_leases},
                     {"leases", nlohmann::json::array()},
                     {"failed", nlohmann::json::array()}};
  for (const auto& l : s.leases)
    out["leases"].push_back({{"owner", l.owner},
                             {"rows", l.rows},
                             {"earliest_expiry_ms", l.earliest_expiry}});
  for (const auto& f : s.failed)
    out["failed"].push_back({{"event_id", f.event_id},
                             {"aggregate_id", f.aggregate_id},
                             {"seq", f.seq},
                             {"event_type", f.event_type},
                             {"attempts", f.attempts},
                             {"last_error", f.last_error}});
  return out;
}

nlohmann::json broker_json(const broker::broker_stats& s) {
  return {
      {"queues", s.queues},
      {"processing", s.processing},
      {"processed", s.processed},
      {"dead_letter", s.dead_letter},
      {"counters", s.counters},
      {"consumers_lock", s.consumers_holder.empty()
                             ? nlohmann::json(nullptr)
                             : nlohmann::json{{"holder", s.consumers_holder},
                                              {"ttl_ms", s.consumers_ttl_ms}}}};
}

/// The FAILED table's last error is cut to this many characters; --json has
/// it in full. Wide enough that a broker refusal, which starts with the
/// event's id, still shows its reason.
constexpr std::size_t error_width = 100;

/// An age the way an operator reads it, rounded down: 350ms, 2.3s, 4m12s,
/// 3h05m, 2d04h. Not cli/duration.hpp's exact form: "4213ms" reads slower.
std::string rounded_duration(storage::millis ms) {
  auto n = static_cast<long long>(ms);
  char text[48];
  if (n < 1000)
    std::snprintf(text, sizeof text, "%lldms", n);
  else if (n < 60'000)
    std::snprintf(text, sizeof text, "%lld.%llds", n / 1000, n % 1000 / 100);
  else if (n < 3'600'000)
    std::snprintf(text, sizeof text, "%lldm%02llds", n / 60'000, n / 1000 % 60);
  else if (n < 86'400'000)
    std::snprintf(text, sizeof text, "%lldh%02lldm", n / 3'600'000,
                  n / 60'000 % 60);
  else
    std::snprintf(text, sizeof text, "%lldd%02lldh", n / 86'400'000,
                  n / 3'600'000 % 24);
  return text;
}

/// When a lease runs out, from now: "in 9.8s" or "expired 1.2s ago" (an
/// expired lease waits for another relay to take its rows over).
std::string relative_expiry(storage::millis expiry, storage::millis now) {
  auto left = expiry - now;
  return left > 0 ? "in " + rounded_duration(left)
                  : "expired " + rounded_duration(-left) + " ago";
}

std::int64_t count_of(const storage::outbox_stats& db,
                      const std::string& status) {
  auto found = db.by_status.find(status);
  return found == db.by_status.end() ? 0 : found->second;
}

std::string outbox_text(const storage::outbox_stats& db, storage::millis now) {
  // Statuses in the order a row goes through them, not alphabetical.
  const std::vector<std::string> lifecycle{"PENDING", "SENDING", "PUBLISHED",
                                           "FAILED"};
  text_table statuses{{"STATUS", "ROWS"}};
  for (const auto& status : lifecycle)
    statuses.add_row({status, std::to_string(count_of(db, status))});
  for (const auto& [status, count] : db.by_status)
    if (std::find(lifecycle.begin(), lifecycle.end(), status) ==
        lifecycle.end())
      statuses.add_row({status, std::to_string(count)});
  std::string out = statuses.render() + '\n';

  auto unpublished = count_of(db, "PENDING") + count_of(db, "SENDING");
  text_table totals{{"ORDERS", "OLDEST UNPUBLISHED", "EXPIRED LEASES"}};
  totals.align_right(1).add_row(
      {std::to_string(db.orders),
       unpublished == 0 ? "-" : rounded_duration(db.oldest_unpublished_age),
       std::to_string(db.expired_leases)});
  out += totals.render();

  if (!db.leases.empty()) {
    text_table leases{{"LEASE OWNER", "ROWS", "EARLIEST EXPIRY"}};
    for (const auto& l : db.leases)
      leases.add_row({l.owner, std::to_string(l.rows),
                      relative_expiry(l.earliest_expiry, now)});
    out += '\n' + leases.render();
  }

  if (!db.failed.empty()) {
    text_table failed{
        {"FAILED EVENT", "AGGREGATE", "SEQ", "TYPE", "ATTEMPTS", "LAST ERROR"}};
    for (const auto& f : db.failed)
      failed.add_row({f.event_id, f.aggregate_id, std::to_string(f.seq),
                      f.event_type, std::to_string(f.attempts),
                      fit(f.last_error, error_width)});
    out += '\n' + failed.render();
    auto total = count_of(db, "FAILED");
    if (total > static_cast<std::int64_t>(db.failed.size()))
      out += "(the oldest " + std::to_string(db.failed.size()) + " of " +
             std::to_string(total) + "; outbox failed lists them all)\n";
  }
  return out;
}

std::string redis_text(const broker::broker_stats& redis,
                       const broker::keys& names) {
  // Each queue with the entries consumers have taken from it but not yet
  // finished; a processing list names its queue, so the two sum up per queue.
  std::map<std::string, std::int64_t> in_processing;
  for (const auto& [list, length] : redis.processing)
    in_processing[names.queue_of(list).value_or(list)] += length;
  text_table queues{{"QUEUE", "QUEUED", "PROCESSING"}};
  for (const auto& [queue, length] : redis.queues)
    queues.add_row(
        {queue, std::to_string(length), std::to_string(in_processing[queue])});
  // Lists of queues this configuration no longer has (partitions changed).
  for (const auto& [queue, length] : in_processing)
    if (redis.queues.count(queue) == 0)
      queues.add_row({queue, "", std::to_string(length)});
  std::string out = queues.render();

  if (!redis.processing.empty()) {
    text_table processing{{"PROCESSING LIST", "ENTRIES"}};
    for (const auto& [list, length] : redis.processing)
      processing.add_row({list, std::to_string(length)});
    out += '\n' + processing.render();
  }

  if (!redis.consumers_holder.empty()) {
    text_table lock{{"CONSUMING PROCESS", "LOCK EXPIRES IN"}};
    // -1: the key has no ttl; no renewal will ever end it.
    lock.add_row(
        {redis.consumers_holder, redis.consumers_ttl_ms >= 0
                                     ? rounded_duration(redis.consumers_ttl_ms)
                                     : std::string{"never"}});
    out += '\n' + lock.render();
  }

  text_table counts{{"REDIS", "COUNT"}};
  counts.add_row({"processed", std::to_string(redis.processed)});
  counts.add_row({"dead-letter list", std::to_string(redis.dead_letter)});
  for (const auto& [name, value] : redis.counters)
    counts.add_row({name, std::to_string(value)});
  return out + '\n' + counts.render();
}

void print_text(const storage::outbox_stats& db,
                const std::optional<broker::broker_stats>& redis,
                const std::optional<redis_setup>& setup,
                const std::string& redis_error, const broker::keys& names,
                storage::millis now) {
  auto text = outbox_text(db, now) + '\n';
  text += redis ? redis_text(*redis, names)
                : "REDIS  unavailable: " + text::escaped(redis_error) + '\n';
  if (redis && setup)
    text += '\n' + redis_setup_text(*setup);
  // One write per snapshot: --watch redraws without a half-drawn screen.
  std::cout << text;
}

/// One snapshot of both stores, printed. Returns the exit code. The
/// connections are the caller's: --watch keeps them for every refresh.
int show(const status_options& options, const config::settings& settings,
         SQLite::Database& db, broker::connection& conn) {
  auto now = storage::wall_clock_now();
  auto outbox = storage::outbox_store{db}.stats(now);
  // The database half is useful on its own: show it even if Redis is down.
  std::optional<broker::broker_stats> redis;
  std::optional<redis_setup> setup;
  std::string redis_error;
  try {
    redis = broker::read_stats(conn, settings.broker);
    setup = read_redis_setup(conn, settings.broker);
  } catch (const broker::broker_error& e) {
    redis.reset();
    redis_error = e.what();
  }
  if (options.json) {
    nlohmann::json out{{"outbox", outbox_json(outbox)}};
    out["redis"] =
        redis ? broker_json(*redis) : nlohmann::json{{"error", redis_error}};
    if (redis && setup)
      out["redis"].update(redis_setup_json(*setup));
    std::cout << text::json_text(out) << '\n';
  } else {
    print_text(outbox, redis, setup, redis_error, settings.broker, now);
  }
  std::cout << std::flush;
  return redis ? exit_ok : exit_failure;
}

/// Refreshes every interval until SIGINT or SIGTERM, or until stdout is
/// gone (`status --watch | head -1`), then exits 0. On a terminal the screen
/// is redrawn; otherwise (or with --json) each refresh is appended, one JSON
/// object per line. One database and one Redis connection serve every
/// refresh (a lost Redis connection is reopened by the next one).
int watch(const status_options& options, const config::settings& settings,
          SQLite::Database& db) {
  sigset_t stop = stop_signals();
  ::pthread_sigmask(SIG_BLOCK, &stop, nullptr);
  // A reader that went away must show as a failed write (EPIPE), which
  // ends the watch, not as a SIGPIPE that kills it mid-frame.
  std::signal(SIGPIPE, SIG_IGN);
  bool redraw = !options.json && ::isatty(STDOUT_FILENO) != 0;
  auto nanos = static_cast<long long>(options.interval_s * 1e9);
  timespec interval{static_cast<time_t>(nanos / 1'000'000'000),
                    static_cast<long>(nanos % 1'000'000'000)};
  std::cerr << "outbox status: refreshing every " << options.interval_s
            << " s; Ctrl-C stops\n";
  broker::connection redis{settings.redis};
  for (std::int64_t refresh = 1;; ++refresh) {
    if (redraw)
      std::cout << "\033[H\033[2J";
    show(options, settings, db, redis);
    if (!std::cout) {
      spdlog::debug("status: stdout is closed after refresh {}", refresh);
      return exit_ok;
    }
    spdlog::debug("status: refresh {}", refresh);
    if (wait_for_signal(stop, interval))
      return exit_ok;
  }
}

int status(const status_options& options) {
  apply_log_level(options.common.log_level);
  auto settings = resolve_settings(options.common);
  auto db = open_existing_database(settings.db);
  if (auto stop = check_keyspace(*db, settings, "outbox status"))
    return *stop;
  if (options.watch)
    return watch(options, settings, *db);
  broker::connection redis{settings.redis};
  return show(options, settings, *db, redis);
}

} // namespace

void add_status_command(CLI::App& app, command_action& action) {
  auto options = std::make_shared<status_options>();
  auto* command = app.add_subcommand(
      "status",
      "Outbox counts by status, oldest pending age, leases, queue and "
      "processing lengths, processed, FAILED rows");
  command->add_flag("--json", options->json, "one JSON object on stdout");
  command->add_flag("--watch", options->watch,
                    "refresh until Ctrl-C (with --json: one object per line)");
  command
      ->add_option("--interval", options->interval_s,
                   "seconds between refreshes with --watch (default 2)")
      ->check(finite_range(0.05, 3600.0));
  add_common_options(*command, options->common);
  command->callback(
      [options, &action] { action = [options] { return status(*options); }; });
}

} // namespace outbox::cli
