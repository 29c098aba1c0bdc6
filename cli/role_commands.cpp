// The roles a deployment runs as services, one part of the pipeline each
// (docs/deploy.md): `outbox relay`, `outbox consume`, and `outbox write`,
// the load generator. Each is `outbox run` with its other parts off, and
// runs from its config file alone.

#include "cli/command_registration.hpp"
#include "cli/commands.hpp"
#include "cli/pipeline_flags.hpp"
#include "cli/run_pipeline.hpp"

#include <CLI/CLI.hpp>

namespace outbox::cli {

namespace {

template <pipeline_role Role>
int run_as(const run_options& options) {
  auto as_role = options;
  as_role.role = Role;
  return run_pipeline(as_role);
}

void relay_flags(CLI::App& command, run_options& o) {
  add_relays_flag(command, o);
  add_partitions_flag(command, o);
  add_until_drained_flag(command, o);
  add_service_flags(command, o);
}

void consume_flags(CLI::App& command, run_options& o) {
  add_consumers_flag(command, o);
  add_partitions_flag(command, o);
  add_until_drained_flag(command, o);
  add_service_flags(command, o);
}

void write_flags(CLI::App& command, run_options& o) {
  add_load_flags(command, o);
  add_service_flags(command, o);
}

} // namespace

void add_role_commands(CLI::App& app, command_action& action) {
  add_command<run_options>(
      app, action,
      {"relay",
       "Publish the outbox to Redis as a service: N relays holding leases "
       "on outbox rows, until SIGTERM (exit 0) or --until-drained",
       run_as<pipeline_role::relay>, relay_flags});
  add_command<run_options>(
      app, action,
      {"consume",
       "Apply the queued events as a service: M consumers under the "
       "consumers' lock, until SIGTERM (exit 0) or --until-drained",
       run_as<pipeline_role::consume>, consume_flags});
  add_command<run_options>(
      app, action,
      {"write",
       "The load generator: place K orders (and their follow-up events) "
       "through the writer's group commit, then exit",
       run_as<pipeline_role::write>, write_flags});
}

} // namespace outbox::cli
