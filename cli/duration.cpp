#include "cli/duration.hpp"

#include "text/terminal_text.hpp"
#include "text/utc_time.hpp"

#include <cstdint>
#include <iostream>
#include <limits>

namespace outbox::cli {

namespace {

struct unit {
  const char* name;
  std::int64_t ms;
};

// Largest first, for format_duration.
constexpr unit units[] = {{"d", 24 * 60 * 60 * 1000},
                          {"h", 60 * 60 * 1000},
                          {"m", 60 * 1000},
                          {"s", 1000},
                          {"ms", 1}};

} // namespace

std::optional<storage::millis> parse_duration(const std::string& text) {
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9')
    ++digits;
  if (digits == 0 || digits > 15)
    return std::nullopt;
  auto suffix = text.substr(digits);
  for (const auto& u : units) {
    if (suffix != u.name)
      continue;
    auto value = std::stoll(text.substr(0, digits));
    if (value > std::numeric_limits<std::int64_t>::max() / u.ms)
      return std::nullopt;
    return value * u.ms;
  }
  return std::nullopt;
}

std::optional<storage::millis> duration_flag(const std::string& command,
                                             const std::string& flag,
                                             const std::string& text) {
  auto ms = parse_duration(text);
  if (!ms)
    std::cerr << "outbox " << command << ": " << flag
              << ": expected a duration like 30s, 15m, 12h, 7d or 500ms, "
                 "got '"
              << text::escaped(text) << "'\n";
  return ms;
}

std::string format_utc(storage::millis ms) {
  return text::utc_time(ms);
}

std::string format_duration(storage::millis ms) {
  for (const auto& u : units)
    if (ms != 0 && ms % u.ms == 0)
      return std::to_string(ms / u.ms) + u.name;
  return std::to_string(ms) + "ms";
}

} // namespace outbox::cli
