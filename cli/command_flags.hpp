#pragma once

// Flags several commands take with one meaning, so with one help text:
// --json for a command that prints one result (prints_json), --header for
// a command that writes an event (parse_header_flags),
// --allow-evicting-redis for one that starts actors on Redis.

#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace outbox::cli {

/// --json: JSON on stdout, as it is also whenever stdout is not a terminal.
void add_json_flag(CLI::App& command, bool& json);

/// --header NAME=VALUE, repeatable: `what` ("a header of the OrderPlaced
/// event"); a traceparent among them gives the trace, else `whose` ("the
/// order") gets one of its own.
void add_header_flag(CLI::App& command, std::vector<std::string>& headers,
                     const std::string& what, const std::string& whose);

/// --allow-evicting-redis (redis.allow_evicting).
void add_allow_evicting_flag(CLI::App& command, bool& allow);

} // namespace outbox::cli
