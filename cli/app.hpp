#pragma once

#include "cli/commands.hpp"

namespace outbox::cli {

/// outbox: parses the command line, runs the command and returns the exit
/// code. `outbox bench` is outbox-bench's (cli/bench_forward.hpp).
int run_app(int argc, char** argv);

/// Adds a program's commands to its parser.
using add_commands_fn = void (*)(CLI::App& app, command_action& action);

/// How outbox and outbox-bench run a command line: logs to stderr, the
/// commands `add_commands` adds (under the name outbox, so that their help
/// and their errors say `outbox COMMAND`), parse errors in the tool's
/// words, and the command's exceptions as exit codes (exit_codes.hpp).
/// Answers the exit code.
int run_commands(int argc, char** argv, add_commands_fn add_commands);

} // namespace outbox::cli
