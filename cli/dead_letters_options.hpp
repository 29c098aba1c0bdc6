#pragma once

// What `outbox dead-letters` and its subcommands (replay, drop) parse, for
// the files that run them.

#include "cli/common_options.hpp"

#include <string>
#include <vector>

namespace CLI {
class App;
} // namespace CLI

namespace outbox::cli {

struct dead_letters_options {
  common_options common;
  bool json = false;
  /// Set when the `replay` subcommand was given.
  bool replay = false;
  std::vector<std::string> event_ids;
  bool all = false;
  /// Set when the `drop` subcommand was given.
  bool drop = false;
  std::vector<std::string> drop_ids;
  bool malformed = false;
  std::string reason;
};

/// `outbox dead-letters drop`: answers the exit code.
int drop_dead_letters(const dead_letters_options& options);

/// Adds the `drop` subcommand to `command` (`outbox dead-letters`).
void add_drop_subcommand(CLI::App& command, dead_letters_options& options);

} // namespace outbox::cli
