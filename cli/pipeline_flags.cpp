#include "cli/pipeline_flags.hpp"

#include "cli/command_flags.hpp"

#include <CLI/CLI.hpp>

namespace outbox::cli {

void add_relays_flag(CLI::App& command, run_options& o) {
  command.add_option("--relays", o.relays, "relay actors (run.relays)");
}

void add_consumers_flag(CLI::App& command, run_options& o) {
  command.add_option("--consumers", o.consumers,
                     "consumer actors (run.consumers)");
}

void add_load_flags(CLI::App& command, run_options& o) {
  command.add_option("--orders", o.orders,
                     "orders the load generator places (run.orders)");
  command.add_option("--followup-share", o.followup_share,
                     "share of orders with OrderPaid and OrderShipped "
                     "follow-ups (run.followup_share)");
  command.add_option("--rate", o.orders_per_second,
                     "offered load in orders per second, 0 = as fast as "
                     "possible (run.orders_per_second)");
}

void add_partitions_flag(CLI::App& command, run_options& o) {
  command.add_option("--partitions", o.partitions,
                     "queue lists (broker.partitions)");
}

void add_until_drained_flag(CLI::App& command, run_options& o) {
  command.add_flag("--until-drained", o.until_drained,
                   "stop once the orders are committed and everything this "
                   "process handles has drained");
}

void add_service_flags(CLI::App& command, run_options& o) {
  command
      .add_option("--metrics-port", o.metrics_port,
                  "serve Prometheus metrics on 127.0.0.1:PORT/metrics, "
                  "0 = none (default 0)")
      ->check(CLI::Range(0, 65535));
  command.add_option("--metrics-listen", o.metrics_listen,
                     "serve Prometheus metrics on HOST:PORT/metrics, HOST an "
                     "IPv4 address (0.0.0.0: every interface)");
  command.add_flag("--json", o.json, "print the report as one JSON object");
  add_allow_evicting_flag(command, o.allow_evicting_redis);
}

} // namespace outbox::cli
