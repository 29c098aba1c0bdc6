#pragma once

// `--header NAME=VALUE`, repeatable: an event's headers from the command
// line (text/event_headers.hpp says what they may hold).

#include <map>
#include <string>
#include <vector>

namespace outbox::cli {

/// The headers the flags name, or store_error(invalid_input) naming the
/// flag: one without '=' or with an empty name, a name given twice, or
/// headers the writers refuse (text::headers_problem).
std::map<std::string, std::string>
parse_header_flags(const std::vector<std::string>& flags);

} // namespace outbox::cli
