#include "cli/app.hpp"

#include "broker/broker_error.hpp"
#include "cli/bench_forward.hpp"
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/flag_defaults.hpp"
#include "cli/notice.hpp"
#include "cli/parse_errors.hpp"
#include "cli/version.hpp"
#include "config/settings.hpp"
#include "storage/store_error.hpp"
#include "text/escaping_sink.hpp"
#include "text/terminal_text.hpp"

#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <iostream>
#include <memory>
#include <string_view>

namespace outbox::cli {

namespace {

int exit_code_for(storage::store_errc code) {
  switch (code) {
  case storage::store_errc::invalid_input:
    return exit_usage;
  case storage::store_errc::outcome_unknown:
    return exit_outcome_unknown;
  default:
    return exit_failure;
  }
}

/// outbox's commands, in the order its help lists them.
void add_outbox_commands(CLI::App& app, command_action& action) {
  add_init_command(app, action);
  add_place_order_command(app, action);
  add_append_command(app, action);
  add_status_command(app, action);
  add_verify_command(app, action);
  add_retry_command(app, action);
  add_run_command(app, action);
  add_role_commands(app, action);
  add_lab_command(app, action);
  add_bench_listing(app);
  add_failed_command(app, action);
  add_purge_command(app, action);
  add_trim_command(app, action);
  add_dead_letters_command(app, action);
  add_help_command(app, action);
  add_version_command(app, action);
  add_inbox_script_command(app, action);
}

} // namespace

int run_app(int argc, char** argv) {
  // outbox-bench runs it, with these very arguments (bench_forward.hpp).
  if (argc > 1 && std::string_view{argv[1]} == "bench")
    return forward_to_bench({argv + 1, argv + argc});
  return run_commands(argc, argv, add_outbox_commands);
}

int run_commands(int argc, char** argv, add_commands_fn add_commands) {
  // Logs go to stderr: stdout carries the commands' JSON. Their messages
  // carry text from the stores, escaped on the way.
  spdlog::set_default_logger(std::make_shared<spdlog::logger>(
      "outbox", std::make_shared<text::escaping_sink>(
                    std::make_shared<spdlog::sinks::stderr_color_sink_mt>())));
  spdlog::set_level(spdlog::level::warn);
  // On a terminal `outbox run` keeps its progress line at the bottom (\r,
  // no line feed): a log line clears it first, or it would be glued onto
  // the line's end; the next refresh draws the progress line again.
  if (::isatty(STDERR_FILENO) != 0)
    spdlog::set_pattern("\r\033[K[%Y-%m-%d %H:%M:%S.%e] [%n] [%^%l%$] %v");

  CLI::App app{
      "outbox: a transactional outbox pipeline (SQLite or PostgreSQL -> Redis)",
      "outbox"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string{"outbox "} + outbox_version(),
                       "print the version and exit");
  command_action action;
  add_commands(app, action);
  show_config_defaults(app);

  // CLI11 reports an unknown command as "a subcommand is required": name it.
  auto known = [&app](const char* name) {
    for (const auto* command : app.get_subcommands({}))
      if (command->get_name() == name)
        return true;
    return false;
  };
  if (argc > 1 && argv[1][0] != '-' && !known(argv[1])) {
    std::cerr << "outbox: unknown command '" << text::escaped(argv[1])
              << "' (commands:";
    for (const auto* command : app.get_subcommands({}))
      std::cerr << ' ' << command->get_name();
    std::cerr << "; see outbox --help)\n";
    return exit_usage;
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // In the tool's words, naming the flag and the command (parse_errors).
    std::cerr << parse_error_message(app, e) << '\n';
    return exit_usage;
  } catch (const config::config_error& e) {
    std::cerr << "outbox: configuration error: " << text::escaped(e.what())
              << '\n';
    return exit_usage;
  }

  // Through notice(): a service logging JSON lines (log.format) gets its
  // last words as one too; before the config is read they are text.
  try {
    return action();
  } catch (const config::config_error& e) {
    notice("outbox", std::string{"configuration error: "} + e.what(), "error");
    return exit_usage;
  } catch (const storage::store_error& e) {
    if (e.code() == storage::store_errc::invalid_input)
      notice("outbox", std::string{"invalid input: "} + e.what(), "error");
    else if (e.code() == storage::store_errc::outcome_unknown)
      notice("outbox", std::string{"outcome unknown: "} + e.what(), "error");
    else
      notice("outbox",
             std::string{"database error ("} + to_string(e.code()) +
                 "): " + e.what(),
             "error");
    return exit_code_for(e.code());
  } catch (const broker::broker_error& e) {
    notice("outbox",
           std::string{"Redis error ("} + to_string(e.code()) +
               "): " + e.what(),
           "error");
    return exit_failure;
  } catch (const std::exception& e) {
    notice("outbox", e.what(), "error");
    return exit_failure;
  }
}

} // namespace outbox::cli
