#include "broker/relay_processes.hpp"

#include "broker/process_notes.hpp"

#include <algorithm>
#include <cstdio>

namespace outbox::broker {

std::vector<relay_process> read_relay_processes(connection& conn,
                                                const keys& names) {
  auto read = read_process_notes(conn, names.relay_processes());
  auto now = read.now;
  std::vector<relay_process> found;
  for (const auto& [process, text] : read.notes) {
    char state[16] = "";
    int relays = 0;
    long long since = 0;
    long long seen = 0;
    long long until = 0;
    if (std::sscanf(text.c_str(), "%15s %d %lld %lld %lld", state, &relays,
                    &since, &seen, &until) != 5)
      continue;
    relay_process p{process, state, relays,
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
