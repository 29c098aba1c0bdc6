#include "cli/header_flags.hpp"

#include "storage/store_error.hpp"
#include "text/event_headers.hpp"
#include "text/terminal_text.hpp"

namespace outbox::cli {

namespace {

[[noreturn]] void refuse(const std::string& why) {
  throw storage::store_error(storage::store_errc::invalid_input, why);
}

} // namespace

std::map<std::string, std::string>
parse_header_flags(const std::vector<std::string>& flags) {
  std::map<std::string, std::string> headers;
  for (const auto& flag : flags) {
    auto equals = flag.find('=');
    if (equals == std::string::npos || equals == 0)
      refuse("--header must be NAME=VALUE with a name (got \"" +
             text::escaped(flag) + "\")");
    auto name = flag.substr(0, equals);
    if (!headers.emplace(name, flag.substr(equals + 1)).second)
      refuse("--header " + text::escaped(name) + " is given twice");
  }
  if (auto problem = text::headers_problem(headers))
    refuse("--header: " + *problem);
  return headers;
}

} // namespace outbox::cli
