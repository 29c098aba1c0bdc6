#pragma once

// Every JSON document the project writes out (commands' --json output, the
// run report, a verify result) goes through json_text(): its strings may
// carry bytes from Redis, the database or a flag that are not UTF-8, on
// which nlohmann's default dump() throws a type_error and loses the whole
// document.

#include <nlohmann/json.hpp>

#include <string>

namespace outbox::text {

/// `value` serialised: each byte that is not well-formed UTF-8 becomes
/// U+FFFD, and the text is plain ASCII (everything past it and every control
/// character written as \uXXXX), so no raw ESC or C1 control reaches a
/// terminal either. `indent` as for dump(): -1 for one line.
template <class Json>
std::string json_text(const Json& value, int indent = -1) {
  return value.dump(indent, ' ', true, Json::error_handler_t::replace);
}

/// `s` as json_text writes it, read back: each byte that is not well-formed
/// UTF-8 becomes U+FFFD. For structs that stand for a JSON document (the
/// run report), so that they say what their JSON says.
inline std::string as_json_writes_it(const std::string& s) {
  auto quoted = nlohmann::json(s).dump(
      -1, ' ', false, nlohmann::json::error_handler_t::replace);
  return nlohmann::json::parse(quoted).get<std::string>();
}

} // namespace outbox::text
