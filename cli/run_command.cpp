#include "cli/command_registration.hpp"
#include "cli/commands.hpp"
#include "cli/pipeline_flags.hpp"
#include "cli/run_pipeline.hpp"

#include <CLI/CLI.hpp>

namespace outbox::cli {

namespace {

void add_flags(CLI::App& command, run_options& o) {
  add_relays_flag(command, o);
  add_consumers_flag(command, o);
  add_load_flags(command, o);
  add_partitions_flag(command, o);
  add_until_drained_flag(command, o);
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
  command.add_option("--crash-consumer-after-sink-commit",
                     o.crash_after_sink_commit,
                     "probability a consumer dies after its own database "
                     "committed a batch, before Redis recorded it "
                     "(crash.consumer_after_sink_commit)");
  command.add_option("--crash-recovery-pause-ms", o.crash_recovery_pause_ms,
                     "the coordinator freezes this long between two "
                     "processing lists it recovers, 0 = never "
                     "(crash.recovery_pause_ms)");
  add_service_flags(command, o);
}

} // namespace

void add_run_command(CLI::App& app, command_action& action) {
  add_command<run_options>(
      app, action,
      {"run",
       "Run the actor pipeline: writer and load generator, N relays, M "
       "consumers, supervised by a coordinator",
       run_pipeline, add_flags});
}

} // namespace outbox::cli
