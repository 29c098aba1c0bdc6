#include "text/utc_time.hpp"

#include <cstdio>
#include <ctime>

namespace outbox::text {

std::string utc_time(std::int64_t ms) {
  if (ms < 0) // a cutoff before 1970: a DURATION longer than the epoch's age
    return std::to_string(ms) + " ms";
  auto seconds = static_cast<std::time_t>(ms / 1000);
  std::tm utc{};
  ::gmtime_r(&seconds, &utc);
  char text[32];
  auto n = std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &utc);
  char millis[8];
  std::snprintf(millis, sizeof millis, ".%03dZ", static_cast<int>(ms % 1000));
  return std::string(text, n) + millis;
}

} // namespace outbox::text
