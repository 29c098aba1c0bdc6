#pragma once

#include <functional>

namespace CLI {
class App;
}

namespace outbox::cli {

/// A parsed command, ready to run; returns its exit code. Exceptions escape
/// to run_app, which maps them to exit codes (cli/exit_codes.hpp).
using command_action = std::function<int()>;

/// Each adds one subcommand; when it is the one parsed, `action` is set.
void add_init_command(CLI::App& app, command_action& action);
void add_place_order_command(CLI::App& app, command_action& action);
void add_append_command(CLI::App& app, command_action& action);
void add_status_command(CLI::App& app, command_action& action);
void add_verify_command(CLI::App& app, command_action& action);
void add_retry_command(CLI::App& app, command_action& action);
void add_run_command(CLI::App& app, command_action& action);
/// `relay`, `consume` and `write` (role_commands.cpp).
void add_role_commands(CLI::App& app, command_action& action);
void add_lab_command(CLI::App& app, command_action& action);
void add_failed_command(CLI::App& app, command_action& action);
void add_purge_command(CLI::App& app, command_action& action);
void add_trim_command(CLI::App& app, command_action& action);
void add_dead_letters_command(CLI::App& app, command_action& action);
/// `outbox help [COMMAND]` and `outbox version` (cli/help_command.cpp).
void add_help_command(CLI::App& app, command_action& action);
void add_version_command(CLI::App& app, command_action& action);
void add_inbox_script_command(CLI::App& app, command_action& action);

} // namespace outbox::cli
