#include "broker/relay_processes.hpp"

#include "broker/process_notes.hpp"

#include <cstdio>

namespace outbox::broker {

namespace {

std::optional<relay_process> parse_relay_note(const std::string& process,
                                              const std::string& note,
                                              std::int64_t now) {
  char state[16] = "";
  int relays = 0;
  long long since = 0;
  long long seen = 0;
  long long until = 0;
  if (std::sscanf(note.c_str(), "%15s %d %lld %lld %lld", state, &relays,
                  &since, &seen, &until) != 5)
    return std::nullopt;
  relay_process p{process, state, relays, ms_since(since, now),
                  ms_since(seen, now)};
  if (p.state == "running" && until <= now) {
    p.state = "silent";
    p.for_ms = p.seen_ago_ms;
  }
  return p;
}

} // namespace

std::vector<relay_process> read_relay_processes(connection& conn,
                                                const keys& names) {
  // Running first, then the most recently seen.
  return read_processes<relay_process>(
      conn, names.relay_processes(), parse_relay_note, [](const auto& p) {
        return std::pair{p.state != "running", p.seen_ago_ms};
      });
}

} // namespace outbox::broker
