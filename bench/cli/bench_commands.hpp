#pragma once

// The commands of outbox-bench: `bench`, which `outbox bench` hands over
// (cli/bench_forward.hpp), and the hidden pipeline process its stages
// start of this very program (bench/process_config.hpp).

#include "cli/commands.hpp"

#include <string_view>

namespace outbox::cli {

/// Whether `word` names one of them; outbox-bench run without one runs
/// `bench` (`outbox-bench --quick` is `outbox bench --quick`).
bool is_bench_command(std::string_view word);

/// Adds both to outbox-bench's parser.
void add_bench_commands(CLI::App& app, command_action& action);

/// `bench` (bench_command.cpp).
void add_bench_command(CLI::App& app, command_action& action);
/// The hidden pipeline process (pipeline_process_command.cpp).
void add_pipeline_process_command(CLI::App& app, command_action& action);

} // namespace outbox::cli
