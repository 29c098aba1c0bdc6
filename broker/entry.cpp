#include "broker/entry.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <optional>
#include <stdexcept>

namespace outbox::broker {

namespace {

using ordered_json = nlohmann::ordered_json;

/// Lua numbers are doubles: the inbox script can only check integers up to
/// 2^53, so both sides stop there.
constexpr std::int64_t max_exact_integer = std::int64_t{1} << 53;

constexpr std::size_t max_event_id_bytes = 128;

/// The inbox script's words for a `v` it does not read, in the same order
/// of checks.
constexpr const char* unknown_version =
    "v must be 1 (the queue entry version this consumer reads) or absent";

/// The inbox script's cjson refuses JSON nested deeper than this (as not
/// valid JSON), and nlohmann's dump() recurses once per level, so deeper
/// input would overflow the stack in decode: both sides refuse it.
constexpr std::size_t max_nesting = 1000;

} // namespace

std::optional<std::string_view> plain_event_id(std::string_view text) {
  // Without a backslash, a string in valid JSON holds no quote, so each
  // `"event_id"` in the text is a whole string token: the key, when the
  // entry has one, and written once it is the only key of that name (a
  // duplicate would be decoded last-wins).
  constexpr std::string_view key = "\"event_id\"";
  constexpr std::string_view value_start = ":\"";
  if (text.find('\\') != std::string_view::npos)
    return std::nullopt;
  auto at = text.find(key);
  if (at == std::string_view::npos ||
      text.find(key, at + 1) != std::string_view::npos)
    return std::nullopt;
  auto from = at + key.size();
  if (text.compare(from, value_start.size(), value_start) != 0)
    return std::nullopt;
  from += value_start.size();
  auto end = text.find('"', from);
  if (end == std::string_view::npos)
    return std::nullopt;
  return text.substr(from, end - from);
}

bool nested_deeper_than(const std::string& text, std::size_t limit) {
  std::size_t depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limit)
        return true;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return false;
}

namespace {

bool is_nonempty_string(const ordered_json& value) {
  return value.is_string() && !value.get_ref<const std::string&>().empty();
}

/// An integer in [min, 2^53]; an integral float (1.0) counts, as it does for
/// the inbox script, which cannot tell them apart.
std::optional<std::int64_t> integer_in_range(const ordered_json& value,
                                             std::int64_t min) {
  std::int64_t result = 0;
  if (value.is_number_integer()) {
    if (value.is_number_unsigned() &&
        value.get<std::uint64_t>() >
            static_cast<std::uint64_t>(max_exact_integer))
      return std::nullopt;
    result = value.get<std::int64_t>();
  } else if (value.is_number_float()) {
    auto number = value.get<double>();
    if (std::floor(number) != number || number < -9.0e15 || number > 9.0e15)
      return std::nullopt;
    result = static_cast<std::int64_t>(number);
  } else {
    return std::nullopt;
  }
  if (result < min || result > max_exact_integer)
    return std::nullopt;
  return result;
}

/// The shape a consumer reads headers in: an object whose values are
/// strings (writers check more: text/event_headers.hpp).
bool headers_shape(const ordered_json& headers) {
  if (!headers.is_object())
    return false;
  for (const auto& value : headers)
    if (!value.is_string())
      return false;
  return true;
}

malformed_entry text_malformed(const char* name) {
  return malformed_entry{std::string{name} +
                         " must be UTF-8 text without control characters"};
}

malformed_entry malformed(std::string reason) {
  return malformed_entry{std::move(reason)};
}

/// A required name (aggregate_id, event_type) read into `to`: why it is
/// malformed unless it is a non-empty string of clean text.
std::optional<malformed_entry> read_name(const ordered_json& value,
                                         const char* name, std::string& to) {
  if (!is_nonempty_string(value))
    return malformed(std::string{name} + " must be a non-empty string");
  to = value.get<std::string>();
  if (!clean_text(to))
    return text_malformed(name);
  return std::nullopt;
}

} // namespace

bool clean_text(const std::string& text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7F)
      return false;
    if (c == 0xC2 && i + 1 < text.size() &&
        static_cast<unsigned char>(text[i + 1]) < 0xA0)
      return false;
  }
  return true;
}

std::string encode(const event_entry& entry) {
  auto payload = ordered_json::parse(entry.payload, nullptr, false);
  if (payload.is_discarded() || !payload.is_object())
    throw std::invalid_argument("payload must be a JSON object");
  ordered_json object;
  object["v"] = entry_version;
  object["event_id"] = entry.event_id;
  object["aggregate_id"] = entry.aggregate_id;
  object["seq"] = entry.seq;
  object["event_type"] = entry.event_type;
  object["payload"] = std::move(payload);
  if (!entry.headers.empty()) {
    auto headers = ordered_json::parse(entry.headers, nullptr, false);
    if (!headers_shape(headers))
      throw std::invalid_argument("headers must be a JSON object of strings");
    object["headers"] = std::move(headers);
  }
  if (entry.committed_at != 0)
    object["committed_at"] = entry.committed_at;
  if (entry.published_at != 0)
    object["published_at"] = entry.published_at;
  try {
    return object.dump();
  } catch (const ordered_json::type_error&) {
    throw std::invalid_argument("entry contains text that is not UTF-8");
  }
}

std::variant<event_entry, malformed_entry> decode(const std::string& text) {
  // The checks and reasons follow the inbox script (broker/lua/inbox_entry.lua)
  // in the same order, so a bad entry gets the same reason on both sides.
  if (nested_deeper_than(text, max_nesting))
    return malformed("entry is not valid JSON");
  auto object = ordered_json::parse(text, nullptr, false);
  if (object.is_discarded())
    return malformed("entry is not valid JSON");
  if (!object.is_object())
    return malformed("entry must be a JSON object");
  event_entry entry;
  auto field = [&](const char* name) -> const ordered_json& {
    static const ordered_json absent;
    auto i = object.find(name);
    return i == object.end() ? absent : *i;
  };
  // A newer format than this reader knows would be misread: refused (the
  // consumer dead-letters it; replayed once the consumer is upgraded).
  if (object.contains("v") && integer_in_range(field("v"), 1) != entry_version)
    return malformed(unknown_version);
  auto& event_id = field("event_id");
  if (!is_nonempty_string(event_id) ||
      event_id.get_ref<const std::string&>().size() > max_event_id_bytes)
    return malformed("event_id must be a non-empty string of at most 128 "
                     "bytes");
  entry.event_id = event_id.get<std::string>();
  if (!clean_text(entry.event_id))
    return text_malformed("event_id");
  if (auto bad =
          read_name(field("aggregate_id"), "aggregate_id", entry.aggregate_id))
    return *bad;
  auto seq = integer_in_range(field("seq"), 1);
  if (!seq)
    return malformed("seq must be an integer >= 1 (at most 2^53)");
  entry.seq = *seq;
  if (auto bad = read_name(field("event_type"), "event_type", entry.event_type))
    return *bad;
  auto& payload = field("payload");
  if (!payload.is_object())
    return malformed("payload must be a JSON object");
  entry.payload = payload.dump();
  if (object.contains("headers")) {
    auto& headers = field("headers");
    if (!headers_shape(headers))
      return malformed("headers must be a JSON object of strings");
    entry.headers = headers.dump();
  }
  if (object.contains("committed_at")) {
    auto committed_at = integer_in_range(object["committed_at"], 0);
    if (!committed_at)
      return malformed("committed_at must be an integer >= 0");
    entry.committed_at = *committed_at;
  }
  if (object.contains("published_at")) {
    auto published_at = integer_in_range(object["published_at"], 0);
    if (!published_at)
      return malformed("published_at must be an integer >= 0");
    entry.published_at = *published_at;
  }
  return entry;
}

} // namespace outbox::broker
