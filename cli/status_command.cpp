#include "broker/broker_error.hpp"
#include "broker/broker_stats.hpp"
#include "broker/connection.hpp"
#include "cli/commands.hpp"
#include "cli/common_options.hpp"
#include "cli/exit_codes.hpp"
#include "storage/outbox_store.hpp"

#include <CLI/CLI.hpp>
#include <SQLiteCpp/Database.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <signal.h>
#include <unistd.h>

#include <ctime>
#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>

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
  return {{"queues", s.queues},
          {"processing", s.processing},
          {"processed", s.processed},
          {"dead_letter", s.dead_letter},
          {"counters", s.counters}};
}

void print_text(const storage::outbox_stats& db,
                const std::optional<broker::broker_stats>& redis,
                const std::string& redis_error, storage::millis now) {
  std::cout << "orders " << db.orders << "\noutbox";
  for (const auto& [status, count] : db.by_status)
    std::cout << "  " << status << ' ' << count;
  std::cout << "\noldest unpublished age " << db.oldest_unpublished_age
            << " ms, expired leases " << db.expired_leases << '\n';
  for (const auto& l : db.leases)
    std::cout << "lease  " << std::left << std::setw(40) << l.owner << ' '
              << l.rows << " rows, expires in " << (l.earliest_expiry - now)
              << " ms\n";
  for (const auto& f : db.failed)
    std::cout << "FAILED " << f.event_id << ' ' << f.aggregate_id << " seq "
              << f.seq << ' ' << f.event_type << " attempts " << f.attempts
              << ": " << f.last_error << '\n';
  if (!redis) {
    std::cout << "redis  unavailable: " << redis_error << '\n';
    return;
  }
  for (const auto& [name, length] : redis->queues)
    std::cout << "queue  " << name << ' ' << length << '\n';
  for (const auto& [name, length] : redis->processing)
    std::cout << "processing " << name << ' ' << length << '\n';
  std::cout << "processed " << redis->processed << ", dead-lettered "
            << redis->dead_letter;
  for (const auto& [name, value] : redis->counters)
    std::cout << ", " << name << ' ' << value;
  std::cout << '\n';
}

/// One snapshot of both stores, printed. Returns the exit code.
int show(const status_options& options, const config::settings& settings,
         SQLite::Database& db) {
  auto now = storage::wall_clock_now();
  auto outbox = storage::outbox_store{db}.stats(now);
  // The database half is useful on its own: show it even if Redis is down.
  std::optional<broker::broker_stats> redis;
  std::string redis_error;
  try {
    broker::connection conn{settings.redis};
    redis = broker::read_stats(conn, settings.broker);
  } catch (const broker::broker_error& e) {
    redis_error = e.what();
  }
  if (options.json) {
    nlohmann::json out{{"outbox", outbox_json(outbox)}};
    out["redis"] =
        redis ? broker_json(*redis) : nlohmann::json{{"error", redis_error}};
    std::cout << out.dump() << '\n';
  } else {
    print_text(outbox, redis, redis_error, now);
  }
  std::cout << std::flush;
  return redis ? exit_ok : exit_failure;
}

/// Refreshes every interval until SIGINT or SIGTERM (then exit 0). On a
/// terminal the screen is redrawn; otherwise (or with --json) each refresh
/// is appended, one JSON object per line.
int watch(const status_options& options, const config::settings& settings,
          SQLite::Database& db) {
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  ::pthread_sigmask(SIG_BLOCK, &stop, nullptr);
  bool redraw = !options.json && ::isatty(STDOUT_FILENO) != 0;
  auto nanos = static_cast<long long>(options.interval_s * 1e9);
  timespec interval{static_cast<time_t>(nanos / 1'000'000'000),
                    static_cast<long>(nanos % 1'000'000'000)};
  std::cerr << "outbox status: refreshing every " << options.interval_s
            << " s; Ctrl-C stops\n";
  for (std::int64_t refresh = 1;; ++refresh) {
    if (redraw)
      std::cout << "\033[H\033[2J";
    show(options, settings, db);
    spdlog::debug("status: refresh {}", refresh);
    if (::sigtimedwait(&stop, nullptr, &interval) > 0)
      return exit_ok;
  }
}

int status(const status_options& options) {
  apply_log_level(options.common.log_level);
  auto settings = resolve_settings(options.common);
  auto db = open_existing_database(settings.db);
  return options.watch ? watch(options, settings, *db)
                       : show(options, settings, *db);
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
      ->check(CLI::Range(0.05, 3600.0));
  add_common_options(*command, options->common);
  command->callback(
      [options, &action] { action = [options] { return status(*options); }; });
}

} // namespace outbox::cli
