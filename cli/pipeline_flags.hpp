#pragma once

// The flags `outbox run` shares with the roles (`relay`, `consume`,
// `write`), each declared once with its help text and config key.

#include "cli/run_pipeline.hpp"

namespace CLI {
class App;
}

namespace outbox::cli {

/// --relays N (run.relays).
void add_relays_flag(CLI::App& command, run_options& o);
/// --consumers M (run.consumers).
void add_consumers_flag(CLI::App& command, run_options& o);
/// --orders, --followup-share, --rate: the load generator's.
void add_load_flags(CLI::App& command, run_options& o);
/// --partitions P (broker.partitions).
void add_partitions_flag(CLI::App& command, run_options& o);
/// --until-drained.
void add_until_drained_flag(CLI::App& command, run_options& o);
/// --metrics-port, --metrics-listen, --json, --allow-evicting-redis.
void add_service_flags(CLI::App& command, run_options& o);

} // namespace outbox::cli
