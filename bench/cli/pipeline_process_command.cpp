#include "bench/cli/bench_commands.hpp"
#include "bench/process_config.hpp"
#include "bench/workspace.hpp"
#include "cli/command_registration.hpp"
#include "cli/pipeline_flags.hpp"
#include "cli/run_pipeline.hpp"
#include "cli/stop_signals.hpp"

#include <CLI/CLI.hpp>

#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>

namespace outbox::cli {

namespace {

void add_pipeline_process_flags(CLI::App& command, run_options& o) {
  add_relays_flag(command, o);
  add_consumers_flag(command, o);
  add_load_flags(command, o);
}

/// The pipeline of `outbox run`, on the bench's keys: the config file the
/// stage wrote holds the user's names, which validation accepts; "bench."
/// goes before every one afterwards, and before the keyspace stamp, so
/// that no user's config can name the bench's keys.
int run_pipeline_process(const run_options& options) {
  // It ends with the bench (SIGTERM, a graceful stop), also when the bench
  // is killed. The stop signals are blocked before: a SIGTERM between the
  // two would otherwise kill it mid-write (run_pipeline blocks them again).
  sigset_t stop = stop_signals();
  ::pthread_sigmask(SIG_BLOCK, &stop, nullptr);
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  return run_pipeline_with(options, [](config::settings& s) {
    s.broker = bench::bench_keys(s.broker);
    s.key_prefix = "bench." + s.key_prefix;
  });
}

} // namespace

void add_pipeline_process_command(CLI::App& app, command_action& action) {
  add_command<run_options>(app, action,
                           {bench::pipeline_process_command,
                            "A relay or consumer process of the bench's "
                            "stages, on the bench's keys",
                            run_pipeline_process, add_pipeline_process_flags})
      .group("");
}

} // namespace outbox::cli
