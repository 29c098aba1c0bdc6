#pragma once

// How a command joins `outbox`, written once: a subcommand whose flags fill
// one options struct, its own flags first and the common ones last (as every
// command's help lists them), and the action that runs it once parsing is
// done.

#include "cli/commands.hpp"
#include "cli/common_options.hpp"

#include <CLI/CLI.hpp>

#include <memory>
#include <string>

namespace outbox::cli {

/// One command. Options holds what its flags set, the common ones in
/// `common`; one instance is shared by the parser and the action.
template <class Options>
struct command_spec {
  const char* name;
  std::string description;
  /// Runs the parsed command; answers its exit code.
  int (*run)(const Options&);
  /// Adds the command's own flags, in the order its help lists them; none
  /// when null.
  void (*add_flags)(CLI::App& command, Options& options) = nullptr;
  /// Reads what the values alone do not say (whether a flag was given at
  /// all), once the command is parsed; nothing when null.
  void (*parsed)(const CLI::App& command, Options& options) = nullptr;
};

/// Adds `spec` to `app`; when it is the command parsed, `action` runs it.
/// Answers the subcommand, for what follows the common options.
template <class Options>
CLI::App& add_command(CLI::App& app, command_action& action,
                      const command_spec<Options>& spec) {
  auto options = std::make_shared<Options>();
  auto* command = app.add_subcommand(spec.name, spec.description);
  if (spec.add_flags)
    spec.add_flags(*command, *options);
  add_common_options(*command, options->common);
  command->callback([options, command, spec, &action] {
    if (spec.parsed)
      spec.parsed(*command, *options);
    action = [options, run = spec.run] { return run(*options); };
  });
  return *command;
}

} // namespace outbox::cli
