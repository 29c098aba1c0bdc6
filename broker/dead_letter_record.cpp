#include "broker/dead_letter_record.hpp"

#include "broker/entry.hpp"
#include "broker/entry_head.hpp"
#include "text/event_headers.hpp"
#include "text/json_text.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <utility>
#include <variant>

namespace outbox::broker {

namespace {

using json = nlohmann::json;

/// A record is a flat object; extra fields a later inbox adds may nest a
/// little. Deeper is junk, refused before parsing (dump() recurses).
constexpr std::size_t max_record_nesting = 64;

/// Length of the valid UTF-8 sequence at `at`, 0 when there is none.
std::size_t utf8_sequence(const std::string& text, std::size_t at) {
  auto byte = [&](std::size_t i) {
    return i < text.size() ? static_cast<unsigned char>(text[i]) : 0u;
  };
  auto lead = byte(at);
  if (lead < 0x80)
    return 1;
  std::size_t length = 0;
  unsigned min = 0, max = 0xBF; // the range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2, min = 0x80;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    min = lead == 0xE0 ? 0xA0 : 0x80; // no overlong form
    max = lead == 0xED ? 0x9F : 0xBF; // no surrogate
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    min = lead == 0xF0 ? 0x90 : 0x80; // no overlong form
    max = lead == 0xF4 ? 0x8F : 0xBF; // nothing past U+10FFFF
  } else {
    return 0;
  }
  if (byte(at + 1) < min || byte(at + 1) > max)
    return 0;
  for (std::size_t i = 2; i < length; ++i)
    if (byte(at + i) < 0x80 || byte(at + i) > 0xBF)
      return 0;
  return length;
}

/// A whole number, as cjson writes them (every number is a double there:
/// 12 may come as 12.0); nothing for anything else.
std::optional<std::int64_t> whole_number(const json& v) {
  if (v.is_number_unsigned())
    return v.get<std::uint64_t>() <= 9'007'199'254'740'992u
               ? std::optional<std::int64_t>(v.get<std::int64_t>())
               : std::nullopt;
  if (v.is_number_integer())
    return v.get<std::int64_t>();
  if (v.is_number_float()) {
    auto x = v.get<double>();
    if (std::floor(x) == x && x >= -9.0e15 && x <= 9.0e15)
      return static_cast<std::int64_t>(x);
  }
  return std::nullopt;
}

/// What is wrong with the record's shape; empty when it is the inbox's.
std::string shape_problem(const json& r) {
  if (!r.is_object())
    return "record is not a JSON object";
  auto field = [&](const char* name) -> const json* {
    auto i = r.find(name);
    return i == r.end() ? nullptr : &*i;
  };
  auto* reason = field("reason");
  if (reason == nullptr || !reason->is_string())
    return "record has no \"reason\" string";
  auto* entry = field("entry");
  if (entry == nullptr || !entry->is_string())
    return "record has no \"entry\" string";
  auto* size = field("size");
  if (size == nullptr || whole_number(*size).value_or(-1) < 0)
    return "record has no \"size\" integer >= 0";
  auto* truncated = field("truncated");
  if (truncated == nullptr || !truncated->is_boolean())
    return "record has no \"truncated\" boolean";
  return {};
}

} // namespace

bool is_utf8(const std::string& text) {
  for (std::size_t at = 0; at < text.size();) {
    auto length = utf8_sequence(text, at);
    if (length == 0)
      return false;
    at += length;
  }
  return true;
}

std::string to_utf8(const std::string& text) {
  std::string result;
  result.reserve(text.size());
  for (std::size_t at = 0; at < text.size();) {
    auto length = utf8_sequence(text, at);
    if (length == 0) {
      result += "\xEF\xBF\xBD";
      ++at;
    } else {
      result.append(text, at, length);
      at += length;
    }
  }
  return result;
}

dead_letter parse_dead_letter(std::size_t index, std::string record) {
  dead_letter d;
  d.index = index;
  d.record = std::move(record);
  // cjson copies bytes that are not UTF-8 as they are; nlohmann refuses
  // them. Only a hand-made entry has such bytes: show them as U+FFFD.
  bool utf8 = is_utf8(d.record);
  auto parsed =
      nested_deeper_than(d.record, max_record_nesting)
          ? json(json::value_t::discarded)
          : json::parse(utf8 ? d.record : to_utf8(d.record), nullptr, false);
  if (parsed.is_discarded())
    d.record_problem = "record is not valid JSON";
  else
    d.record_problem = shape_problem(parsed);
  if (!d.record_problem.empty()) {
    d.not_replayable = "malformed record: " + d.record_problem;
    return d;
  }
  for (auto& [name, value] : parsed.items()) {
    if (name == "reason")
      d.reason = value.get<std::string>();
    else if (name == "entry")
      d.entry = value.get<std::string>();
    else if (name == "size")
      d.size = *whole_number(value);
    else if (name == "truncated")
      d.truncated = value.get<bool>();
    else
      d.extra[name] = text::json_text(value);
  }
  d.not_utf8 = !utf8;

  auto fields = read_entry_head(d.entry);
  d.event_id = std::move(fields.event_id);
  d.aggregate_id = std::move(fields.aggregate_id);
  d.event_type = std::move(fields.event_type);
  d.seq = fields.seq;
  if (fields.traceparent)
    d.trace_id = text::trace_id_from(*fields.traceparent);

  if (d.truncated) {
    d.not_replayable = "truncated: only " + std::to_string(d.entry.size()) +
                       " of its " + std::to_string(d.size) + " bytes were kept";
  } else if (auto decoded = decode(d.entry);
             auto* bad = std::get_if<malformed_entry>(&decoded)) {
    d.not_replayable = "malformed entry (" + bad->reason +
                       "): the inbox would dead-letter it again";
  } else if (d.not_utf8) {
    d.not_replayable = "the record holds bytes that are not UTF-8: outbox "
                       "never publishes such entries";
  }
  return d;
}

} // namespace outbox::broker
