#pragma once

// Relay processes' heartbeats. A relay shows in the outbox only while it
// holds a lease, so with every relay down (or idle) nothing there tells an
// operator whether anyone will publish the next row. Each process running
// relays notes itself in one Redis hash about once a second, and marks
// itself stopped when it stops; a process that was killed simply stops
// noting. `outbox status` lists them all (broker/relay_processes.hpp) and
// `status --check` is unhealthy when rows wait and no relay was seen for a
// while.

#include "broker/broker_fwd.hpp"
#include "broker/lua_script.hpp"

#include <cstdint>
#include <string>

namespace outbox::broker {

/// How long a stopped or silent process's note is kept, after it was last
/// seen, so `outbox status` can still name it: a day.
inline constexpr std::int64_t relay_note_kept_ms = 86'400'000;

class relay_presence {
public:
  /// Notes in the hash `processes` (keys::relay_processes()).
  relay_presence(connection& conn, std::string processes);

  /// `process` runs `relays` relays now; the note holds for `ttl_ms` unless
  /// renewed. Drops the notes not seen for relay_note_kept_ms. It never
  /// fails on the hash itself: a key of another type goes without notes.
  /// Throws broker_error for a connection problem.
  void note(const std::string& process, int relays, std::int64_t ttl_ms);

  /// `process` stopped on purpose: its note says so from now on (a killed
  /// one is told by its note running out). Throws broker_error.
  void stopped(const std::string& process);

private:
  connection& conn_;
  std::string processes_;
  lua_script note_;
};

} // namespace outbox::broker
