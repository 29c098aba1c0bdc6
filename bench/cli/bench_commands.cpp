#include "bench/cli/bench_commands.hpp"

#include "bench/process_config.hpp"

namespace outbox::cli {

bool is_bench_command(std::string_view word) {
  return word == "bench" || word == bench::pipeline_process_command;
}

void add_bench_commands(CLI::App& app, command_action& action) {
  add_bench_command(app, action);
  add_pipeline_process_command(app, action);
}

} // namespace outbox::cli
