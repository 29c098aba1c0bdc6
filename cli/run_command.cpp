#include "actors/coordinator.hpp"
#include "actors/messages.hpp"
#include "actors/progress_line.hpp"
#include "actors/system_config.hpp"
#include "adapters/pipeline_probe.hpp"
#include "adapters/redis_ports.hpp"
#include "bench/workspace.hpp"
#include "broker/connection.hpp"
#include "cli/command_registration.hpp"
#include "cli/commands.hpp"
#include "cli/common_options.hpp"
#include "cli/exit_codes.hpp"
#include "cli/keyspace_check.hpp"
#include "cli/metrics_listen.hpp"
#include "cli/redis_preflight.hpp"
#include "cli/stop_signals.hpp"
#include "metrics/metrics_exporter.hpp"
#include "metrics/run_report.hpp"
#include "storage/database.hpp"
#include "storage/db_folder.hpp"
#include "text/terminal_text.hpp"

#include <CLI/CLI.hpp>
#include <caf/all.hpp>

#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <atomic>
#include <ctime>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <system_error>
#include <thread>

namespace outbox::cli {

namespace {

/// Flags of `outbox run`; unset ones keep the config's value.
struct run_options {
  common_options common;
  std::optional<int> relays;
  std::optional<int> consumers;
  std::optional<std::int64_t> orders;
  std::optional<std::uint64_t> seed;
  std::optional<double> followup_share;
  std::optional<int> orders_per_second;
  std::optional<std::size_t> partitions;
  std::optional<double> crash_after_claim;
  std::optional<double> crash_after_publish;
  std::optional<double> crash_pause;
  std::optional<double> crash_after_pop;
  std::optional<double> crash_after_effect;
  std::optional<int> crash_recovery_pause_ms;
  int metrics_port = 0;
  std::string metrics_listen;
  bool until_drained = false;
  bool json = false;
  bool allow_evicting_redis = false;
  /// Hidden: a relay process `outbox bench` started, on the bench's keys.
  bool bench_keyspace = false;
};

template <class T>
void override_with(T& target, const std::optional<T>& flag) {
  if (flag)
    target = *flag;
}

config::settings settings_for(const run_options& o) {
  auto s = resolve_settings(o.common);
  override_with(s.run.relays, o.relays);
  override_with(s.run.consumers, o.consumers);
  override_with(s.run.orders, o.orders);
  override_with(s.run.followup_share, o.followup_share);
  override_with(s.run.orders_per_second, o.orders_per_second);
  override_with(s.broker.partitions, o.partitions);
  override_with(s.crash.seed, o.seed);
  override_with(s.crash.relay_after_claim, o.crash_after_claim);
  override_with(s.crash.relay_after_publish, o.crash_after_publish);
  override_with(s.crash.relay_pause, o.crash_pause);
  override_with(s.crash.consumer_after_pop, o.crash_after_pop);
  override_with(s.crash.consumer_after_effect, o.crash_after_effect);
  override_with(s.crash.recovery_pause_ms, o.crash_recovery_pause_ms);
  if (o.allow_evicting_redis)
    s.allow_evicting_redis = true;
  config::validate(s);
  if (o.bench_keyspace) {
    // After validation, which refuses these names to every pipeline:
    // "bench." before every name and before the keyspace stamp.
    s.broker = bench::bench_keys(s.broker);
    s.key_prefix = "bench." + s.key_prefix;
  }
  return s;
}

/// Writes the partition count every relay and consumer process must share
/// (cli/redis_preflight.hpp). A writer-only process neither records nor
/// compares one: the relays choose the lists, so its broker.partitions is
/// never used, and a stale one in its config must neither block the writer
/// nor fix the count for the relays. Returns the exit code when the run
/// must not start.
std::optional<int> agree_on_partitions(broker::connection& conn,
                                       const config::settings& s) {
  if (s.run.relays == 0 && s.run.consumers == 0)
    return std::nullopt;
  return check_partitions(conn, s, "outbox run");
}

/// The terminal's width in columns, read at each refresh (so a resized
/// window is followed without a SIGWINCH handler); 80 when unknown.
std::size_t terminal_columns() {
  winsize size{};
  if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0)
    return size.ws_col;
  return 80;
}

/// Progress on stderr: on a terminal, one line redrawn in place and fitted
/// to its width (a longer one would wrap and leave a copy behind at every
/// refresh); elsewhere plain lines in full.
std::function<void(const actors::run_progress&)> progress_printer() {
  bool tty = ::isatty(STDERR_FILENO) != 0;
  return [tty](const actors::run_progress& progress) {
    if (tty)
      std::cerr << "\r\033[K"
                << actors::progress_text(progress, terminal_columns())
                << std::flush;
    else
      std::cerr << actors::progress_text(progress, 0) << '\n';
  };
}

/// The Prometheus endpoint on `where`, its store gauges read through
/// a probe of its own. Throws std::runtime_error if the port cannot be bound.
std::unique_ptr<metrics::metrics_exporter>
start_metrics(const config::settings& s, const metrics_listen& where,
              std::shared_ptr<const metrics::run_metrics> metrics) {
  // Scrapes may overlap; the probe's connections are not thread-safe.
  std::shared_ptr<actors::pipeline_port> probe =
      adapters::make_pipeline_probe(s);
  auto probe_mutex = std::make_shared<std::mutex>();
  auto snapshot = [probe, probe_mutex] {
    std::lock_guard<std::mutex> guard{*probe_mutex};
    return probe->snapshot();
  };
  return std::make_unique<metrics::metrics_exporter>(
      where.host, where.port, std::move(metrics), std::move(snapshot));
}

/// Turns SIGINT/SIGTERM into a graceful shutdown of the coordinator. The
/// signals are blocked in every thread (CAF's included) and taken here.
class signal_watch {
public:
  explicit signal_watch(caf::actor coordinator)
      : thread_([this, coordinator] {
          sigset_t set = stop_signals();
          timespec tick{0, 200'000'000};
          try {
            while (!done_) {
              int taken = wait_for_signal(set, tick);
              if (taken == 0)
                continue;
              // The first stop is announced; another (an impatient second
              // Ctrl-C) only says the stop is under way.
              int expected = 0;
              if (signal_.compare_exchange_strong(expected, taken)) {
                std::cerr << "\noutbox run: " << signal_name(taken)
                          << ": stopping gracefully (leases released, "
                             "in-flight work finished)\n";
                caf::anon_send(coordinator, actors::shutdown_atom_v);
              } else {
                std::cerr << "\noutbox run: " << signal_name(taken)
                          << ": already stopping\n";
              }
            }
          } catch (const std::system_error& e) {
            // Deaf to signals from now on: stop rather than run unstoppable.
            std::cerr << "\noutbox run: " << e.what() << "; stopping\n";
            caf::anon_send(coordinator, actors::shutdown_atom_v);
          }
        }) {}

  ~signal_watch() {
    done_ = true;
    thread_.join();
  }

  /// The first stop signal taken (SIGINT, SIGTERM), 0 for none.
  int signal() const { return signal_; }

private:
  std::atomic<bool> done_{false};
  std::atomic<int> signal_{0};
  std::thread thread_;
};

/// The exit code of a report: a violation wins over an interruption.
int exit_code_of(const std::string& report, int stop_signal) {
  if (!metrics::run_report_ok(report)) {
    std::cerr << "outbox run: "
              << text::escaped(metrics::run_report_failure(report)) << '\n';
    return exit_failure;
  }
  auto interruption = metrics::run_report_interruption(report);
  if (interruption.empty())
    return exit_ok;
  std::cerr << "outbox run: "
            << (stop_signal != 0 ? signal_name(stop_signal) + ": " : "")
            << text::escaped(interruption) << '\n';
  return stop_signal == SIGTERM ? exit_terminated : exit_interrupted;
}

int run(const run_options& options) {
  // Blocked first, in this thread and so in every thread started later;
  // signal_watch takes them, so a stop is always graceful.
  sigset_t stop = stop_signals();
  ::pthread_sigmask(SIG_BLOCK, &stop, nullptr);
  apply_log_level(options.common.log_level);
  if (options.bench_keyspace) {
    // A relay process of `outbox bench`: it ends with the bench (SIGTERM,
    // a graceful stop), also when the bench is killed.
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  }
  auto s = settings_for(options);
  auto listen =
      resolve_metrics_listen(options.metrics_listen, options.metrics_port);
  broker::connection redis{s.redis};
  redis.ensure_connected();
  // Read-only, before anything is created: a refused Redis leaves nothing.
  if (auto stop = check_redis_settings(redis, s, "outbox run"))
    return *stop;
  if (auto stop = check_commands(redis, s, "outbox run"))
    return *stop;
  // Create or migrate once, before several connections race to switch the
  // file to WAL.
  storage::prepare_database_folder(s.db);
  auto db = storage::connect(s.db, storage::open_mode::migrated);
  if (auto stop = check_keyspace(*db, s, "outbox run", keyspace_use::read))
    return *stop;
  // After the database: a process that cannot start must not be the one
  // that fixes the count for all the others.
  if (auto stop = agree_on_partitions(redis, s))
    return *stop;
  auto metrics = std::make_shared<metrics::run_metrics>();
  std::unique_ptr<metrics::metrics_exporter> exporter;
  if (listen.port > 0) {
    try {
      exporter = start_metrics(s, listen, metrics);
    } catch (const std::runtime_error& e) {
      std::cerr << "outbox run: " << text::escaped(e.what()) << '\n';
      return exit_failure;
    }
    std::cerr << "outbox run: metrics on " << exporter->url() << '\n';
  }
  // Stamped last, once nothing can refuse this start: a process that does
  // not run must not claim the keyspace for its database.
  if (auto stop = check_keyspace(*db, s, "outbox run", keyspace_use::write))
    return *stop;
  db.reset();

  caf::actor_system_config cfg;
  actors::register_outbox_types(cfg);
  actors::tune_scheduler(cfg);
  caf::actor_system system{cfg};

  actors::coordinator_setup setup;
  setup.settings = s;
  setup.until_drained = options.until_drained;
  setup.name_prefix = process_name();
  // The start time tells this process from an earlier one that had the
  // same host and pid (a restarted container).
  setup.consumer_lock_holder =
      setup.name_prefix + "@" + std::to_string(storage::wall_clock_now());
  setup.make_publisher = [s] {
    return adapters::make_redis_publish_port(s.redis, s.broker);
  };
  setup.make_consume_port = [s](const std::string& token) {
    return adapters::make_redis_consume_port(
        s.redis, s.broker, broker::fence{s.broker.consumer_lock(), token});
  };
  setup.make_probe = [s] { return adapters::make_pipeline_probe(s); };
  setup.clock = storage::wall_clock_now;
  setup.metrics = metrics;
  setup.progress = progress_printer();
  auto coordinator =
      system.spawn<caf::detached>(actors::coordinator, std::move(setup));
  std::string report;
  int stop_signal = 0;
  {
    signal_watch signals{coordinator};
    if (!options.until_drained)
      std::cerr << "outbox run: running; SIGINT or SIGTERM stops it "
                   "gracefully\n";
    caf::scoped_actor self{system};
    self->request(coordinator, caf::infinite, actors::run_atom_v)
        .receive([&](const std::string& r) { report = r; },
                 [&](caf::error& err) {
                   std::cerr
                       << "outbox run: " << text::escaped(system.render(err))
                       << '\n';
                 });
    stop_signal = signals.signal();
  }
  if (::isatty(STDERR_FILENO))
    std::cerr << '\n';
  if (report.empty())
    return exit_failure;
  if (options.json)
    std::cout << report << '\n';
  else
    std::cout << metrics::run_report_text(report);
  return exit_code_of(report, stop_signal);
}

void add_flags(CLI::App& command, run_options& o) {
  command.add_option("--relays", o.relays, "relay actors (run.relays)");
  command.add_option("--consumers", o.consumers,
                     "consumer actors (run.consumers)");
  command.add_option("--orders", o.orders,
                     "orders the load generator places (run.orders)");
  command.add_option("--followup-share", o.followup_share,
                     "share of orders with OrderPaid and OrderShipped "
                     "follow-ups (run.followup_share)");
  command.add_option("--rate", o.orders_per_second,
                     "offered load in orders per second, 0 = as fast as "
                     "possible (run.orders_per_second)");
  command.add_option("--partitions", o.partitions,
                     "queue lists (broker.partitions)");
  command.add_flag("--until-drained", o.until_drained,
                   "stop once the orders are committed and everything this "
                   "process handles has drained");
  command.add_option("--seed", o.seed, "seed of crash injection (crash.seed)");
  command.add_option("--crash-relay-after-claim", o.crash_after_claim,
                     "probability a relay dies holding fresh leases "
                     "(crash.relay_after_claim)");
  command.add_option("--crash-relay-after-publish", o.crash_after_publish,
                     "probability a relay dies after publishing, before its "
                     "ack, duplicates (crash.relay_after_publish)");
  command.add_option("--crash-relay-pause", o.crash_pause,
                     "probability a relay freezes past its lease, a zombie "
                     "(crash.relay_pause)");
  command.add_option("--crash-consumer-after-pop", o.crash_after_pop,
                     "probability a consumer dies after popping an entry "
                     "(crash.consumer_after_pop)");
  command.add_option("--crash-consumer-after-effect", o.crash_after_effect,
                     "probability a consumer dies after the effect, before "
                     "removing the entry (crash.consumer_after_effect)");
  command.add_option("--crash-recovery-pause-ms", o.crash_recovery_pause_ms,
                     "the coordinator freezes this long between two "
                     "processing lists it recovers, 0 = never "
                     "(crash.recovery_pause_ms)");
  command
      .add_option("--metrics-port", o.metrics_port,
                  "serve Prometheus metrics on 127.0.0.1:PORT/metrics, "
                  "0 = none (default 0)")
      ->check(CLI::Range(0, 65535));
  command.add_option("--metrics-listen", o.metrics_listen,
                     "serve Prometheus metrics on HOST:PORT/metrics, HOST an "
                     "IPv4 address (0.0.0.0: every interface)");
  command.add_flag("--json", o.json, "print the report as one JSON object");
  // Hidden: for the relay processes of `outbox bench` on PostgreSQL.
  command.add_flag("--bench-keyspace", o.bench_keyspace)->group("");
  command.add_flag("--allow-evicting-redis", o.allow_evicting_redis,
                   "start even when Redis's maxmemory-policy may evict keys "
                   "(redis.allow_evicting)");
}

} // namespace

void add_run_command(CLI::App& app, command_action& action) {
  add_command<run_options>(
      app, action,
      {"run",
       "Run the actor pipeline: writer and load generator, N relays, M "
       "consumers, supervised by a coordinator",
       run, add_flags});
}

} // namespace outbox::cli
