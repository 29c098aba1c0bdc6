#include "broker/consumer_processes.hpp"

#include "broker/connection.hpp"
#include "broker/server_time.hpp"

#include <hiredis/hiredis.h>

#include <algorithm>
#include <cstdio>

namespace outbox::broker {

std::vector<consumer_process> read_consumer_processes(connection& conn,
                                                      const keys& names) {
  auto replies =
      conn.pipeline({{"TIME"}, {"HGETALL", names.consumer_processes()}});
  auto now = time_ms(replies[0]);
  std::vector<consumer_process> found;
  const auto& notes = replies[1];
  if (notes->type != REDIS_REPLY_ARRAY) // a key of another type
    return found;
  for (std::size_t i = 0; i + 1 < notes->elements; i += 2) {
    auto text = reply_text(*notes->element[i + 1]);
    char role[16] = "";
    long long since = 0;
    long long until = 0;
    if (std::sscanf(text.c_str(), "%15s %lld %lld", role, &since, &until) !=
            3 ||
        until <= now)
      continue;
    found.push_back({reply_text(*notes->element[i]), role,
                     std::max<std::int64_t>(now - since, 0), until - now});
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
    if ((a.role == "consuming") != (b.role == "consuming"))
      return a.role == "consuming";
    return a.for_ms > b.for_ms;
  });
  return found;
}

} // namespace outbox::broker
