#include "broker/broker_error.hpp"
#include "broker/connection.hpp"
#include "broker/oldest_waiting.hpp"
#include "cli/command_registration.hpp"
#include "cli/commands.hpp"
#include "cli/common_options.hpp"
#include "cli/database_to_read.hpp"
#include "cli/duration.hpp"
#include "cli/exit_codes.hpp"
#include "cli/finite_range.hpp"
#include "cli/keyspace_check.hpp"
#include "cli/redis_settings_view.hpp"
#include "cli/status_snapshot.hpp"
#include "cli/stop_signals.hpp"
#include "storage/database.hpp"
#include "text/json_text.hpp"

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include <signal.h>
#include <unistd.h>

#include <csignal>
#include <ctime>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

namespace outbox::cli {

namespace {

/// --max-unpublished-age when not given: a relay publishes a row within
/// milliseconds, and a row backing off still tries again well within it;
/// five minutes is a pipeline that stopped, not one that is slow.
constexpr const char* default_max_unpublished_age = "5m";

/// --max-relay-silence when not given: a running relay process notes its
/// heartbeat every second; half a minute without one is a process that is
/// gone (or cut off), not one restarting.
constexpr const char* default_max_relay_silence = "30s";

/// --max-consumer-silence when not given: the same half minute, for the
/// consuming process: a restart takes seconds.
constexpr const char* default_max_consumer_silence = "30s";

/// Between two frames of --watch that are appended, not redrawn.
constexpr const char* frame_separator =
    "------------------------------------------------------------------------"
    "\n";

struct status_options {
  common_options common;
  bool json = false;
  bool watch = false;
  double interval_s = 2;
  bool interval_given = false;
  bool check = false;
  std::string max_unpublished_age = default_max_unpublished_age;
  bool max_age_given = false;
  std::string max_relay_silence = default_max_relay_silence;
  bool max_silence_given = false;
  std::string max_consumer_silence = default_max_consumer_silence;
  bool max_consumer_silence_given = false;
};

status_snapshot take_snapshot(const config::settings& settings,
                              storage::database& db, broker::connection& conn) {
  status_snapshot s;
  s.now = storage::wall_clock_now();
  s.outbox = db.views()->stats(s.now);
  // The database half is useful on its own: show it even if Redis is down.
  try {
    s.redis = broker::read_stats(conn, settings.broker);
    s.setup = read_redis_setup(conn, settings.broker);
    s.consumers = broker::read_consumer_processes(conn, settings.broker);
    s.relays = broker::read_relay_processes(conn, settings.broker);
    s.oldest_waiting = broker::oldest_waiting_ms(conn, settings.broker);
    s.refused = broker::refused_commands(conn, settings.broker, true, true);
  } catch (const broker::broker_error& e) {
    s.redis.reset();
    s.setup.reset();
    s.redis_error = e.what();
  }
  return s;
}

/// One snapshot of both stores, printed in one write. Returns the exit
/// code: with --check, 1 unless healthy; else 1 when Redis is down. The
/// connections are the caller's: --watch keeps them for every refresh.
int show(const status_options& options, const config::settings& settings,
         const health_limits& limits, const std::string& header,
         storage::database& db, broker::connection& conn) {
  auto s = take_snapshot(settings, db, conn);
  std::optional<health> verdict;
  if (options.check)
    verdict = judge(s, limits);
  if (options.json)
    std::cout << text::json_text(status_json(s, verdict)) << '\n';
  else
    std::cout << (header.empty() ? "" : header + format_utc(s.now) + "\n\n") +
                     status_text(s, settings.broker, verdict);
  std::cout << std::flush;
  if (verdict)
    return verdict->ok() ? exit_ok : exit_failure;
  return s.redis ? exit_ok : exit_failure;
}

/// Refreshes every interval until SIGINT or SIGTERM, or until stdout is
/// gone (`status --watch | head -1`), then exits 0. On a terminal the screen
/// is redrawn; otherwise (or with --json) each refresh is appended: frames
/// of tables apart by a line of dashes, one JSON object per line with its
/// "ts". Each frame of tables starts with the time it was taken. One
/// database and one Redis connection serve every refresh (a lost Redis
/// connection is reopened by the next one).
int watch(const status_options& options, const config::settings& settings,
          const health_limits& limits, storage::database& db) {
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
    else if (refresh > 1 && !options.json)
      std::cout << frame_separator;
    // An immutable reader sees the file as it was when opened: each frame
    // after the first opens it anew, or the watch would show a frozen state.
    std::unique_ptr<storage::database> fresh;
    if (refresh > 1 && db.frozen())
      fresh = open_existing_database_to_read(settings.db);
    show(options, settings, limits, "outbox status at ", fresh ? *fresh : db,
         redis);
    if (!std::cout) {
      spdlog::debug("status: stdout is closed after refresh {}", refresh);
      return exit_ok;
    }
    spdlog::debug("status: refresh {}", refresh);
    if (wait_for_signal(stop, interval))
      return exit_ok;
  }
}

/// Flags that only mean something beside another one: refused alone, so a
/// probe written `status --max-unpublished-age 1m` does not silently pass.
bool flags_fit(const status_options& options) {
  if (options.interval_given && !options.watch) {
    std::cerr << "outbox: status --interval only applies with --watch\n";
    return false;
  }
  if (options.max_age_given && !options.check) {
    std::cerr << "outbox: status --max-unpublished-age only applies with "
                 "--check\n";
    return false;
  }
  for (auto [given, flag] :
       {std::pair{options.max_silence_given, "--max-relay-silence"},
        std::pair{options.max_consumer_silence_given,
                  "--max-consumer-silence"}})
    if (given && !options.check) {
      std::cerr << "outbox: status " << flag << " only applies with --check\n";
      return false;
    }
  if (options.check && options.watch) {
    std::cerr << "outbox: status --check answers once, with its exit code; "
                 "it cannot be combined with --watch\n";
    return false;
  }
  return true;
}

int status(const status_options& options) {
  if (!flags_fit(options))
    return exit_usage;
  auto max_age = duration_flag("status", "--max-unpublished-age",
                               options.max_unpublished_age);
  auto max_silence =
      duration_flag("status", "--max-relay-silence", options.max_relay_silence);
  auto max_consumer_silence = duration_flag("status", "--max-consumer-silence",
                                            options.max_consumer_silence);
  if (!max_age || !max_silence || !max_consumer_silence)
    return exit_usage;
  health_limits limits{*max_age, *max_silence, *max_consumer_silence};
  apply_log_level(options.common.log_level);
  auto settings = resolve_settings(options.common);
  auto db = open_existing_database_to_read(settings.db);
  if (auto stop = check_keyspace(*db, settings, "outbox status"))
    return *stop;
  if (options.watch)
    return watch(options, settings, limits, *db);
  broker::connection redis{settings.redis};
  return show(options, settings, limits, "", *db, redis);
}

void add_flags(CLI::App& command, status_options& options) {
  command.add_flag("--json", options.json, "one JSON object on stdout");
  command.add_flag("--watch", options.watch,
                   "refresh until Ctrl-C (with --json: one object per line)");
  command
      .add_option("--interval", options.interval_s,
                  "seconds between refreshes with --watch (default 2)")
      ->check(finite_range(0.05, 3600.0));
  command.add_flag("--check", options.check,
                   "health check: exit 1 when FAILED rows exist, the "
                   "oldest unpublished row is older than "
                   "--max-unpublished-age, rows wait and no relay ran "
                   "within --max-relay-silence, entries wait longer than "
                   "--max-consumer-silence and nobody consumes, the "
                   "consuming process stopped renewing, "
                   "dead-lettered entries wait, or Redis is unreachable; "
                   "else 0");
  command.add_option("--max-unpublished-age", options.max_unpublished_age,
                     std::string{"DURATION for --check (default "} +
                         default_max_unpublished_age + ")");
  command.add_option("--max-relay-silence", options.max_relay_silence,
                     std::string{"DURATION for --check (default "} +
                         default_max_relay_silence + ")");
  command.add_option("--max-consumer-silence", options.max_consumer_silence,
                     std::string{"DURATION for --check (default "} +
                         default_max_consumer_silence + ")");
}

void read_parsed(const CLI::App& command, status_options& options) {
  options.interval_given = command.count("--interval") > 0;
  options.max_age_given = command.count("--max-unpublished-age") > 0;
  options.max_silence_given = command.count("--max-relay-silence") > 0;
  options.max_consumer_silence_given =
      command.count("--max-consumer-silence") > 0;
}

} // namespace

void add_status_command(CLI::App& app, command_action& action) {
  add_command<status_options>(
      app, action,
      {"status",
       "Outbox counts by status, oldest pending age, relays holding leases, "
       "relay processes, the consuming process and standbys, queue and "
       "processing lengths, processed, FAILED rows",
       status, add_flags, read_parsed});
}

} // namespace outbox::cli
