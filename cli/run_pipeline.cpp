#include "cli/run_pipeline.hpp"

#include "broker/connection.hpp"
#include "cli/exit_codes.hpp"
#include "cli/keyspace_check.hpp"
#include "cli/metrics_listen.hpp"
#include "cli/metrics_service.hpp"
#include "cli/notice.hpp"
#include "cli/progress_output.hpp"
#include "cli/service_presence.hpp"
#include "cli/signal_watch.hpp"
#include "cli/startup_verdict.hpp"
#include "cli/stop_signals.hpp"
#include "metrics/run_report_json.hpp"
#include "pipeline/spawn_pipeline.hpp"
#include "startup/effects_preflight.hpp"
#include "startup/redis_preflight.hpp"
#include "startup/sink_preflight.hpp"
#include "storage/database.hpp"
#include "storage/db_folder.hpp"

#include <caf/all.hpp>

#include <signal.h>

#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

namespace outbox::cli {

namespace {

template <class T>
void override_with(T& target, const std::optional<T>& flag) {
  if (flag)
    target = *flag;
}

/// The parts a role runs: its own, at least one of it, and none of the
/// others. Throws config_error naming the flag and its key.
void apply_role(pipeline_role role, config::settings& s) {
  auto at_least_one = [role](std::int64_t n, const char* flag, const char* key,
                             const char* what) {
    if (n < 1)
      throw config::config_error(
          flag, std::string{"outbox "} + role_name(role) + " runs " + what +
                    ": give " + flag + " N or set " + key + " (got " +
                    std::to_string(n) + ")");
  };
  switch (role) {
  case pipeline_role::relay:
    at_least_one(s.run.relays, "--relays", "run.relays", "at least one relay");
    s.run.consumers = 0;
    s.run.orders = 0;
    break;
  case pipeline_role::consume:
    at_least_one(s.run.consumers, "--consumers", "run.consumers",
                 "at least one consumer");
    s.run.relays = 0;
    s.run.orders = 0;
    break;
  case pipeline_role::write:
    at_least_one(s.run.orders, "--orders", "run.orders",
                 "the load generator, which places at least one order");
    s.run.relays = 0;
    s.run.consumers = 0;
    break;
  case pipeline_role::run:
    break;
  }
}

config::settings settings_for(const run_options& o,
                              const settings_adjustment& adjust) {
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
  override_with(s.crash.consumer_after_sink_commit, o.crash_after_sink_commit);
  override_with(s.crash.recovery_pause_ms, o.crash_recovery_pause_ms);
  if (o.allow_evicting_redis)
    s.allow_evicting_redis = true;
  apply_role(o.role, s);
  config::validate(s);
  if (adjust)
    adjust(s);
  return s;
}

/// Writes the partition count every relay and consumer process must share
/// (startup/redis_preflight.hpp). A writer-only process neither records nor
/// compares one: the relays choose the lists, so its broker.partitions is
/// never used, and a stale one in its config must neither block the writer
/// nor fix the count for the relays. Returns the exit code when the run
/// must not start.
std::optional<int> agree_on_partitions(broker::connection& conn,
                                       const config::settings& s,
                                       const std::string& who) {
  if (s.run.relays == 0 && s.run.consumers == 0)
    return std::nullopt;
  return tell_verdict(startup::check_partitions(conn, s), who);
}

/// The exit code of a report: a violation wins over an interruption.
int exit_code_of(const std::string& who, const metrics::run_report& report,
                 int stop_signal) {
  if (!report.ok) {
    notice(who, metrics::run_report_failure(report), "error");
    return exit_failure;
  }
  auto interruption = metrics::run_report_interruption(report);
  if (interruption.empty())
    return exit_ok;
  notice(who,
         (stop_signal != 0 ? signal_name(stop_signal) + ": " : "") +
             interruption,
         "warn");
  return stop_signal == SIGTERM ? exit_terminated : exit_interrupted;
}

int run_in_process(const run_options& options,
                   const settings_adjustment& adjust) {
  // Blocked first, in this thread and so in every thread started later;
  // signal_watch takes them, so a stop is always graceful.
  sigset_t stop = stop_signals();
  ::pthread_sigmask(SIG_BLOCK, &stop, nullptr);
  apply_log_level(options.common.log_level);
  const std::string who = std::string{"outbox "} + role_name(options.role);
  auto s = settings_for(options, adjust);
  auto listen = resolve_metrics_listen(options.metrics_listen,
                                       options.metrics_port, s.metrics_listen);
  broker::connection redis{s.redis};
  redis.ensure_connected();
  // Read-only, before anything is created: a refused Redis leaves nothing.
  if (auto stop = tell_verdict(startup::check_redis_settings(redis, s), who))
    return *stop;
  if (auto stop = tell_verdict(startup::check_commands(redis, s), who))
    return *stop;
  broker::inbox_options inbox;
  if (auto stop = tell_check(
          [&] { return startup::consumer_inbox_options(redis, s, inbox); },
          who))
    return *stop;
  std::optional<adapters::consumer_sink> sink;
  if (auto stop =
          tell_verdict(startup::consumer_sink_settings(s, inbox, sink), who))
    return *stop;
  // Create or migrate once, before several connections race to switch the
  // file to WAL.
  storage::prepare_database_folder(s.db);
  auto db = storage::connect(s.db, storage::open_mode::migrated);
  if (auto stop = check_keyspace(*db, s, who, keyspace_use::read))
    return *stop;
  // After the database: a process that cannot start must not be the one
  // that fixes the count for all the others.
  if (auto stop = agree_on_partitions(redis, s, who))
    return *stop;
  auto metrics = std::make_shared<metrics::run_metrics>();
  // Scrapes and readiness checks on connections of their own: a scrape's
  // full count, which grows with the stores, never holds /readyz back.
  std::shared_ptr<shared_probe> probe;
  std::shared_ptr<shared_probe> readiness_probe;
  if (listen.port > 0) {
    probe = std::make_shared<shared_probe>(s);
    readiness_probe = std::make_shared<shared_probe>(s);
  }
  // Before the exporter, which calls it, and so gone after it.
  service_presence presence{metrics, [readiness_probe]() -> std::string {
                              return readiness_probe
                                         ? readiness_probe->trouble()
                                         : "";
                            }};
  std::unique_ptr<metrics::metrics_exporter> exporter;
  if (listen.port > 0) {
    try {
      exporter = start_metrics(listen, probe, metrics, presence);
    } catch (const std::runtime_error& e) {
      notice(who, e.what(), "error");
      return exit_failure;
    }
    notice(who, "metrics on " + exporter->url());
  }
  // Stamped last, once nothing can refuse this start: a process that does
  // not run must not claim the keyspace for its database.
  if (auto stop = check_keyspace(*db, s, who, keyspace_use::write))
    return *stop;
  db.reset();

  caf::actor_system_config cfg;
  pipeline::configure_system(cfg);
  caf::actor_system system{cfg};

  pipeline::pipeline_hooks hooks;
  // A writer's job ends once its orders are committed.
  bool bounded = options.until_drained || options.role == pipeline_role::write;
  hooks.until_drained = bounded;
  hooks.role = role_name(options.role);
  hooks.name_prefix = process_name();
  // The start time tells this process from an earlier one that had the
  // same host and pid (a restarted container).
  hooks.consumer_lock_holder =
      hooks.name_prefix + "@" + std::to_string(storage::wall_clock_now());
  hooks.inbox = inbox;
  hooks.sink = sink;
  hooks.metrics = metrics;
  show_progress(hooks, s);
  auto coordinator = pipeline::spawn_pipeline(system, s, std::move(hooks));
  pipeline::pipeline_outcome outcome;
  int stop_signal = 0;
  {
    signal_watch signals{coordinator, who,
                         [&presence] { presence.stopping(); }};
    presence.started(std::string{role_name(options.role)} + " running");
    if (!bounded)
      notice(who, "running; SIGINT or SIGTERM stops it gracefully");
    outcome = pipeline::await_report(system, coordinator);
    if (!outcome.error.empty())
      notice(who, outcome.error, "error");
    stop_signal = signals.signal();
  }
  presence.stopping();
  end_progress_line();
  if (outcome.report.empty())
    return exit_failure;
  // The coordinator's answer is the report's JSON: --json prints it as it
  // came, everything else reads it once.
  auto report = metrics::run_report_from_json(outcome.report);
  if (options.json)
    std::cout << outcome.report << '\n';
  else if (report)
    std::cout << metrics::run_report_text(*report);
  if (!report) {
    notice(who, "the report is not a JSON object", "error");
    return exit_failure;
  }
  return exit_code_of(who, *report, stop_signal);
}

} // namespace

const char* role_name(pipeline_role role) {
  switch (role) {
  case pipeline_role::relay:
    return "relay";
  case pipeline_role::consume:
    return "consume";
  case pipeline_role::write:
    return "write";
  case pipeline_role::run:
    break;
  }
  return "run";
}

int run_pipeline(const run_options& options) {
  return run_in_process(options, {});
}

int run_pipeline_with(const run_options& options,
                      const settings_adjustment& adjust) {
  return run_in_process(options, adjust);
}

} // namespace outbox::cli
