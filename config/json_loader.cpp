#include "config/settings.hpp"

#include "config/fields.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <set>
#include <utility>
#include <vector>

namespace outbox::config {
namespace {

using json = nlohmann::ordered_json;
using detail::field;
using detail::kind;

/// A config file is small; this bound stops a mistaken path such as
/// /dev/zero from reading forever.
constexpr std::size_t max_file_size = 1 << 20;

/// A config nests two levels; the parser below builds a path per level, so
/// deep nesting (1 MiB of "[") would cost memory quadratic in the depth.
constexpr std::size_t max_nesting = 64;

std::string join(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

/// Re-throws a config_error with the origin (file name) appended, so a user
/// with several files knows which one is wrong.
[[noreturn]] void rethrow_with_origin(const config_error& e,
                                      const std::string& origin) {
  std::string reason = e.what();
  reason.erase(0, e.key().size() + 2); // "key: "
  throw config_error(e.key(), reason + ", in " + origin);
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return text;
}

std::string upper(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return std::toupper(c); });
  return text;
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j)
    row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1,
                         diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

/// True when `candidate` is close enough to `typed` to suggest: a typo (edit
/// distance <= 2) or one a prefix of the other ("ttl" for "ttl_ms").
bool close(const std::string& typed, const std::string& candidate,
           std::size_t& distance) {
  auto a = lower(typed);
  auto b = lower(candidate);
  distance = edit_distance(a, b);
  if (distance <= 2)
    return true;
  auto shorter = std::min(a.size(), b.size());
  return shorter >= 3 && a.compare(0, shorter, b, 0, shorter) == 0;
}

/// " (did you mean X?)" for an unknown key, or "". `section` is empty for a
/// top-level name. A key that exists in another section is suggested there
/// ("lease.poll_interval_ms" -> "run.poll_interval_ms").
std::string suggestion(const std::string& section, const std::string& typed) {
  std::string best;
  auto best_distance = std::string::npos;
  auto consider = [&](const std::string& candidate, const std::string& path) {
    std::size_t distance = 0;
    if (close(typed, candidate, distance) && distance < best_distance) {
      best = path;
      best_distance = distance;
    }
  };
  if (section.empty()) {
    for (const auto& name : detail::sections())
      consider(name, name);
  } else {
    for (const auto& f : detail::fields())
      if (section == f.section)
        consider(f.key, f.path());
  }
  if (best.empty()) {
    for (const auto& f : detail::fields())
      if (typed == f.key && section != f.section)
        best = f.path();
  }
  return best.empty() ? "" : " (did you mean " + best + "?)";
}

std::string read_file(const std::string& path) {
  if (path.empty())
    throw config_error("config", "the config file path is empty");
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file{
      std::fopen(path.c_str(), "rb"), &std::fclose};
  if (!file)
    throw config_error(path, std::string{"cannot open the config file: "} +
                                 std::strerror(errno));
  std::string text;
  char buffer[16384];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, file.get())) > 0) {
    text.append(buffer, n);
    if (text.size() > max_file_size)
      throw config_error(path, "too large for a config file (over 1 MiB)");
  }
  if (std::ferror(file.get()))
    throw config_error(path, std::string{"cannot read the config file: "} +
                                 std::strerror(errno));
  return text;
}

/// Parses with a callback that records the first duplicate key: nlohmann
/// silently keeps the last one, which would hide a mistake.
json parse(const std::string& text, const std::string& origin) {
  struct frame {
    std::string path;
    bool is_object;
    std::set<std::string> keys;
    std::string last_key;
  };
  std::vector<frame> stack;
  std::string duplicate;
  auto callback = [&](int, json::parse_event_t event, json& parsed) {
    switch (event) {
    case json::parse_event_t::object_start:
    case json::parse_event_t::array_start: {
      if (stack.size() >= max_nesting)
        throw config_error(origin, "invalid JSON: nested deeper than " +
                                       std::to_string(max_nesting) + " levels");
      std::string path;
      if (!stack.empty()) {
        const auto& top = stack.back();
        path = top.is_object ? join(top.path, top.last_key) : top.path + "[]";
      }
      stack.push_back(
          {path, event == json::parse_event_t::object_start, {}, {}});
      break;
    }
    case json::parse_event_t::object_end:
    case json::parse_event_t::array_end:
      stack.pop_back();
      break;
    case json::parse_event_t::key: {
      auto& top = stack.back();
      top.last_key = parsed.get<std::string>();
      if (!top.keys.insert(top.last_key).second && duplicate.empty())
        duplicate = join(top.path, top.last_key);
      break;
    }
    case json::parse_event_t::value:
      break;
    }
    return true;
  };
  json doc;
  try {
    doc = json::parse(text, callback);
  } catch (const json::exception& e) {
    // e.what() is "[json.exception.parse_error.101] parse error at line 3,
    // column 7: ..."; keep the readable part, which has the position. A
    // number too large for a double ("1e400") is an out_of_range error.
    std::string what = e.what();
    auto start = what.find("] ");
    if (start != std::string::npos)
      what.erase(0, start + 2);
    throw config_error(origin, "invalid JSON: " + what);
  }
  if (!duplicate.empty())
    throw config_error(duplicate, "duplicate key, in " + origin);
  return doc;
}

/// "string", "boolean", "null", ... or the number itself for a number.
std::string describe(const json& value) {
  if (value.is_number())
    return value.dump();
  return value.type_name();
}

void apply_value(const field& f, const json& value, settings& s) {
  switch (f.type) {
  case kind::integer: {
    // 1.0 is rejected like 1.5: a count or a duration in ms is written
    // as an integer, and accepting some floats would invite 1e3 or 0.5.
    if (!value.is_number_integer())
      throw config_error(f.path(),
                         "expected an integer, got " + describe(value));
    if (value.is_number_unsigned() &&
        value.get<std::uint64_t>() >
            static_cast<std::uint64_t>(detail::int64_max))
      throw config_error(f.path(), "must be between " + std::to_string(f.min) +
                                       " and " + std::to_string(f.max) +
                                       ", got " + describe(value));
    auto number = value.get<std::int64_t>();
    detail::check_integer(f, number);
    f.set_integer(s, number);
    break;
  }
  case kind::number: {
    if (!value.is_number())
      throw config_error(f.path(), "expected a number, got " + describe(value));
    auto number = value.get<double>();
    detail::check_number(f, number);
    f.set_number(s, number);
    break;
  }
  case kind::string: {
    // A password written as a number is still a password: not echoed.
    if (!value.is_string())
      throw config_error(
          f.path(),
          "expected a string, got " +
              (f.secret ? std::string{value.type_name()} : describe(value)));
    auto text = value.get<std::string>();
    // Choices (db.synchronous, log.level) are case-insensitive and stored
    // as the choice is spelt.
    for (const auto& choice : f.choices)
      if (upper(text) == upper(choice))
        text = choice;
    detail::check_string(f, text);
    f.set_string(s, std::move(text));
    break;
  }
  case kind::text_list: {
    if (!value.is_array())
      throw config_error(f.path(), "expected an array of strings, got " +
                                       describe(value));
    std::vector<std::string> items;
    for (const auto& item : value) {
      if (!item.is_string())
        throw config_error(f.path(), "expected an array of strings, got " +
                                         describe(item) + " in it");
      items.push_back(item.get<std::string>());
    }
    detail::check_list(f, items);
    f.set_list(s, std::move(items));
    break;
  }
  case kind::boolean:
    // A switch that loses data when on: only an explicit true turns it on.
    if (!value.is_boolean())
      throw config_error(f.path(),
                         "expected true or false, got " + describe(value));
    f.set_boolean(s, value.get<bool>());
    break;
  }
}

const field* find_field(const std::string& section, const std::string& key) {
  for (const auto& f : detail::fields())
    if (section == f.section && key == f.key)
      return &f;
  return nullptr;
}

bool known_section(const std::string& name) {
  const auto& all = detail::sections();
  return std::find(all.begin(), all.end(), name) != all.end();
}

} // namespace

settings load_file(const std::string& path, settings base) {
  return apply_json(read_file(path), path, std::move(base));
}

settings apply_json(const std::string& json_text, const std::string& origin,
                    settings base) {
  const std::string where = origin.empty() ? "config" : origin;
  auto doc = parse(json_text, where);
  if (!doc.is_object())
    throw config_error(where, "expected a JSON object at the top level, got " +
                                  describe(doc));
  try {
    for (const auto& [name, section] : doc.items()) {
      if (!known_section(name))
        throw config_error(name, "unknown section" + suggestion("", name));
      if (!section.is_object())
        throw config_error(name,
                           "expected an object, got " + describe(section));
      for (const auto& [key, value] : section.items()) {
        const field* f = find_field(name, key);
        if (name == "broker" && key == "reserved")
          throw config_error(
              "broker.reserved",
              "no longer a setting: the stock reservation is an effect "
              "(consumer.effects_lua builtin:orders, effects/orders.lua), "
              "which writes the hash <broker.key_prefix>effects:inventory."
              "reserved; remove the key (a hash you named here is left as "
              "it was: add its fields to that one)");
        if (f == nullptr)
          throw config_error(join(name, key),
                             "unknown key" + suggestion(name, key));
        apply_value(*f, value, base);
      }
    }
  } catch (const config_error& e) {
    rethrow_with_origin(e, where);
  }
  return base;
}

} // namespace outbox::config
