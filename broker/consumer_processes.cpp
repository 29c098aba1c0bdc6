#include "broker/consumer_processes.hpp"

#include "broker/process_notes.hpp"

#include <cstdio>

namespace outbox::broker {

namespace {

std::optional<consumer_process> parse_consumer_note(const std::string& process,
                                                    const std::string& note,
                                                    std::int64_t now) {
  char role[16] = "";
  long long since = 0;
  long long until = 0;
  long long seen = 0;
  long long again = 0;
  // "<role> <since> <until> <seen> <until>"; earlier versions wrote the
  // first three only.
  auto fields = std::sscanf(note.c_str(), "%15s %lld %lld %lld %lld", role,
                            &since, &until, &seen, &again);
  if ((fields != 3 && fields != 5) || until <= now)
    return std::nullopt;
  consumer_process p;
  p.process = process;
  p.role = role;
  p.for_ms = ms_since(since, now);
  p.expires_in_ms = until - now;
  if (fields == 5)
    p.seen_ago_ms = ms_since(seen, now);
  return p;
}

} // namespace

std::vector<consumer_process> read_consumer_processes(connection& conn,
                                                      const keys& names) {
  // The lock's holder first, then the longest in its role.
  return read_processes<consumer_process>(
      conn, names.consumer_processes(), parse_consumer_note, [](const auto& p) {
        return std::pair{p.role != "consuming", -p.for_ms};
      });
}

} // namespace outbox::broker
