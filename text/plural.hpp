#pragma once

// A count and its noun, for the messages and reports that name how many.

#include <cstdint>
#include <string>

namespace outbox::text {

/// "1 relay", "2 relays", "0 relays".
inline std::string plural(std::int64_t n, const std::string& one,
                          const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

/// As above, the plural being `one` + "s".
inline std::string plural(std::int64_t n, const std::string& one) {
  return plural(n, one, one + "s");
}

} // namespace outbox::text
