#include "cli/bench_forward.hpp"
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/version.hpp"
#include "text/terminal_text.hpp"

#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>
#include <string>
#include <vector>

namespace outbox::cli {

namespace {

/// `outbox help dead-letters replay`: the help of that (sub)command, the
/// same text as `outbox dead-letters replay --help`.
int help(const CLI::App& app, const std::vector<std::string>& path) {
  const CLI::App* command = &app;
  std::string name = app.get_name();
  for (const auto& word : path) {
    const CLI::App* next = nullptr;
    for (const auto* sub : command->get_subcommands({}))
      if (sub->get_name() == word)
        next = sub;
    if (next == nullptr) {
      std::cerr << "outbox: help: no command '" << text::escaped(word) << "'"
                << (command == &app ? "" : " under " + name)
                << " (see outbox --help)\n";
      return exit_usage;
    }
    command = next;
    name += " " + word;
  }
  // Its flags are outbox-bench's: it tells them.
  if (path == std::vector<std::string>{"bench"})
    return forward_to_bench({"bench", "--help"});
  // The formatter, not App::help(), which would show the help of the
  // command being run (this one).
  std::cout << command->get_formatter()->make_help(command, name,
                                                   CLI::AppFormatMode::Normal);
  return exit_ok;
}

} // namespace

void add_help_command(CLI::App& app, command_action& action) {
  auto path = std::make_shared<std::vector<std::string>>();
  auto* command = app.add_subcommand(
      "help", "Show the help of COMMAND (the same as outbox COMMAND --help)");
  command->add_option("command", *path, "COMMAND [SUBCOMMAND]");
  command->callback([path, &app, &action] {
    action = [path, &app] { return help(app, *path); };
  });
}

void add_version_command(CLI::App& app, command_action& action) {
  auto* command = app.add_subcommand("version", "Print the version");
  command->callback([&action] {
    action = [] {
      std::cout << "outbox " << outbox_version() << '\n';
      return exit_ok;
    };
  });
}

} // namespace outbox::cli
