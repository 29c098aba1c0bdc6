#include "text/event_headers.hpp"

#include "text/utf8_file.hpp"

#include <nlohmann/json.hpp>

namespace outbox::text {

namespace {

/// Valid UTF-8 without C0, DEL or C1 controls: the rule for every name
/// that reaches hash fields, log lines and terminals (entry.cpp's
/// clean_text, the inbox script's).
bool clean_name(const std::string& text) {
  if (!is_utf8(text))
    return false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7f ||
        (c == 0xC2 && i + 1 < text.size() &&
         static_cast<unsigned char>(text[i + 1]) < 0xA0))
      return false;
  }
  return true;
}

bool lower_hex(std::string_view text) {
  for (char c : text)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
      return false;
  return true;
}

bool all_zeros(std::string_view text) {
  return text.find_first_not_of('0') == std::string_view::npos;
}

} // namespace

bool is_traceparent(std::string_view value) {
  // 2 + 1 + 32 + 1 + 16 + 1 + 2
  if (value.size() != 55 || value.substr(0, 3) != "00-" || value[35] != '-' ||
      value[52] != '-')
    return false;
  auto trace = value.substr(3, 32);
  auto parent = value.substr(36, 16);
  auto flags = value.substr(53, 2);
  return lower_hex(trace) && lower_hex(parent) && lower_hex(flags) &&
         !all_zeros(trace) && !all_zeros(parent);
}

std::optional<std::string> headers_problem(const nlohmann::json& headers) {
  if (!headers.is_object())
    return std::string{"headers must be a JSON object (got a JSON "} +
           headers.type_name() + ")";
  for (const auto& [name, value] : headers.items()) {
    if (name.empty() || name.size() > max_header_name_bytes)
      return "a header name must be 1 to " +
             std::to_string(max_header_name_bytes) + " bytes (got " +
             std::to_string(name.size()) + ")";
    if (!clean_name(name))
      return "header names must be UTF-8 text without control characters";
    if (!value.is_string())
      return "header " + name + " must be a string (got a JSON " +
             value.type_name() + ")";
    const auto& text = value.get_ref<const std::string&>();
    if (!is_utf8(text))
      return "header " + name + " must be UTF-8 text";
    if (text.size() > max_header_value_bytes)
      return "header " + name + " must be at most " +
             std::to_string(max_header_value_bytes) + " bytes (got " +
             std::to_string(text.size()) + ")";
    if (name == traceparent_header && !is_traceparent(text))
      return "header traceparent must be a W3C traceparent "
             "(00-<32 hex>-<16 hex>-<2 hex>, lower case, ids not all zeros),"
             " not \"" +
             text.substr(0, 64) + "\"";
  }
  // Writers add a traceparent to headers without one: it counts, so that
  // what is stored keeps to the limit (PostgreSQL's trigger checks the
  // stored headers, after this, in the same order and words).
  auto names = headers.size() + (headers.contains(traceparent_header) ? 0 : 1);
  if (names > max_headers)
    return "headers may hold at most " + std::to_string(max_headers) +
           " names (got " + std::to_string(names) + ")";
  return std::nullopt;
}

std::optional<std::string>
headers_problem(const std::map<std::string, std::string>& headers) {
  nlohmann::json object = nlohmann::json::object();
  for (const auto& [name, value] : headers)
    object[name] = value;
  return headers_problem(object);
}

std::optional<std::string> headers_text_problem(std::string_view text) {
  if (text.empty())
    return std::nullopt;
  auto headers = nlohmann::json::parse(text, nullptr, false);
  if (headers.is_discarded())
    return std::string{
        "headers must be a JSON object (got text that is not valid JSON)"};
  return headers_problem(headers);
}

std::optional<std::string> trace_id_of(std::string_view headers_text) {
  if (headers_text.empty())
    return std::nullopt;
  auto headers = nlohmann::json::parse(headers_text, nullptr, false);
  if (!headers.is_object())
    return std::nullopt;
  auto found = headers.find(traceparent_header);
  if (found == headers.end() || !found->is_string())
    return std::nullopt;
  return trace_id_from(found->get_ref<const std::string&>());
}

std::optional<std::string> trace_id_from(std::string_view traceparent) {
  if (!is_traceparent(traceparent))
    return std::nullopt;
  return std::string{traceparent.substr(3, 32)};
}

std::string trace_suffix(std::string_view headers_text) {
  auto trace = trace_id_of(headers_text);
  return trace ? " trace " + *trace : std::string{};
}

std::string headers_text(const std::map<std::string, std::string>& headers) {
  if (headers.empty())
    return {};
  nlohmann::json object = nlohmann::json::object();
  for (const auto& [name, value] : headers)
    object[name] = value;
  return object.dump();
}

} // namespace outbox::text
