// `outbox inbox-script`: the inbox's Lua script and its KEYS, for services
// in other languages that take part in dedup (docs/inbox-script.md). The
// text comes from the binary itself, so it is always the script this
// version's consumers run.

#include "broker/inbox_script.hpp"
#include "cli/command_registration.hpp"
#include "cli/commands.hpp"
#include "cli/common_options.hpp"
#include "cli/exit_codes.hpp"
#include "text/terminal_text.hpp"

#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>

namespace outbox::cli {

namespace {

struct inbox_script_options {
  common_options common;
  bool keys = false;
};

int inbox_script(const inbox_script_options& options) {
  apply_log_level(options.common.log_level);
  if (!options.keys) {
    std::cout << broker::inbox_script_source();
    return exit_ok;
  }
  // Key names come from the config: shown escaped, as all outside text.
  auto settings = resolve_settings(options.common);
  for (const auto& key : broker::inbox_script_keys(settings.broker))
    std::cout << text::escaped(key) << '\n';
  return exit_ok;
}

void add_flags(CLI::App& command, inbox_script_options& options) {
  command.add_flag("--keys", options.keys,
                   "print the script's KEYS instead, in order, one a "
                   "line, as the config names them");
}

} // namespace

void add_inbox_script_command(CLI::App& app, command_action& action) {
  add_command<inbox_script_options>(
      app, action,
      {"inbox-script",
       "Print the inbox's Lua script (dedup + effect), for consumers in other "
       "languages (docs/inbox-script.md)",
       inbox_script, add_flags});
}

} // namespace outbox::cli
