#include "broker/consumer_processes.hpp"

#include "broker/process_notes.hpp"

#include <algorithm>
#include <cstdio>

namespace outbox::broker {

std::vector<consumer_process> read_consumer_processes(connection& conn,
                                                      const keys& names) {
  auto read = read_process_notes(conn, names.consumer_processes());
  auto now = read.now;
  std::vector<consumer_process> found;
  for (const auto& [process, text] : read.notes) {
    char role[16] = "";
    long long since = 0;
    long long until = 0;
    long long seen = 0;
    long long again = 0;
    // "<role> <since> <until> <seen> <until>"; earlier versions wrote the
    // first three only.
    auto fields = std::sscanf(text.c_str(), "%15s %lld %lld %lld %lld", role,
                              &since, &until, &seen, &again);
    if (fields != 3 && fields != 5)
      continue;
    if (until <= now)
      continue;
    consumer_process p;
    p.process = process;
    p.role = role;
    p.for_ms = std::max<std::int64_t>(now - since, 0);
    p.expires_in_ms = until - now;
    if (fields == 5)
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
