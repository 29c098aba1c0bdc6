#include "cli/command_flags.hpp"

#include <CLI/CLI.hpp>

namespace outbox::cli {

void add_json_flag(CLI::App& command, bool& json) {
  command.add_flag("--json", json,
                   "one JSON object on stdout (also whenever stdout is "
                   "not a terminal)");
}

void add_header_flag(CLI::App& command, std::vector<std::string>& headers,
                     const std::string& what, const std::string& whose) {
  command.add_option("--header", headers,
                     "NAME=VALUE: " + what +
                         " (repeatable); a W3C traceparent puts it in your "
                         "trace, else " +
                         whose + " gets a trace of its own");
}

void add_allow_evicting_flag(CLI::App& command, bool& allow) {
  command.add_flag("--allow-evicting-redis", allow,
                   "start even when Redis's maxmemory-policy may evict keys "
                   "(redis.allow_evicting)");
}

} // namespace outbox::cli
