#include "broker/relay_processes.hpp"

#include "broker/connection.hpp"
#include "broker/server_time.hpp"

#include <hiredis/hiredis.h>

#include <algorithm>
#include <cstdio>

namespace outbox::broker {

std::vector<relay_process> read_relay_processes(connection& conn,
                                                const keys& names) {
  auto replies =
      conn.pipeline({{"TIME"}, {"HGETALL", names.relay_processes()}});
  auto now = time_ms(replies[0]);
  std::vector<relay_process> found;
  const auto& notes = replies[1];
  if (notes->type != REDIS_REPLY_ARRAY) // a key of another type
    return found;
  for (std::size_t i = 0; i + 1 < notes->elements; i += 2) {
    auto text = reply_text(*notes->element[i + 1]);
    char state[16] = "";
    int relays = 0;
    long long since = 0;
    long long seen = 0;
    long long until = 0;
    if (std::sscanf(text.c_str(), "%15s %d %lld %lld %lld", state, &relays,
                    &since, &seen, &until) != 5)
      continue;
    relay_process p{reply_text(*notes->element[i]), state, relays,
                    std::max<std::int64_t>(now - since, 0),
                    std::max<std::int64_t>(now - seen, 0)};
    if (p.state == "running" && until <= now) {
      p.state = "silent";
      p.for_ms = p.seen_ago_ms;
    }
    found.push_back(std::move(p));
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
    if ((a.state == "running") != (b.state == "running"))
      return a.state == "running";
    return a.seen_ago_ms < b.seen_ago_ms;
  });
  return found;
}

} // namespace outbox::broker
