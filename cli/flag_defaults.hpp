#pragma once

#include <string>

namespace CLI {
class App;
}

namespace outbox::cli {

/// Shows each flag's default in --help, with the config key it comes from.
/// A flag that overrides a config key ends its description with the key in
/// parentheses, "relay actors (run.relays)"; this rewrites that ending to
/// "(default 2, run.relays)", the default read from config::settings{}, so
/// the help never disagrees with the code. Walks every (sub)command of
/// `app`; call it once all commands are added. Flags with a default of
/// their own (not a config key) say it in their description: "(default
/// 1000)".
void show_config_defaults(CLI::App& app);

/// The built-in default of a config key ("run.relays" -> "2"), as the help
/// shows it; empty when there is no such key.
std::string config_default(const std::string& key);

} // namespace outbox::cli
