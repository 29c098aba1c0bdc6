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
    long long seen = 0;
    long long until = 0;
    // "<role> <since> <seen> <until>"; earlier versions wrote no <seen>.
    auto fields = std::sscanf(text.c_str(), "%15s %lld %lld %lld", role, &since,
                              &seen, &until);
    if (fields == 3)
      until = seen;
    else if (fields != 4)
      continue;
    if (until <= now)
      continue;
    consumer_process p;
    p.process = reply_text(*notes->element[i]);
    p.role = role;
    p.for_ms = std::max<std::int64_t>(now - since, 0);
    p.expires_in_ms = until - now;
    if (fields == 4)
      p.seen_ago_ms = std::max<std::int64_t>(now - seen, 0);
    found.push_back(std::move(p));
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
    if ((a.role == "consuming") != (b.role == "consuming"))
      return a.role == "consuming";
    return a.for_ms > b.for_ms;
  });
  return found;
}

} // namespace outbox::broker
