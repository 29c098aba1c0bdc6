#pragma once

// The relay processes as `outbox status` shows them: those running (idle or
// busy), those that stopped, and those that went silent (killed, or cut
// off), from their heartbeats (broker/relay_presence.hpp).

#include "broker/broker_fwd.hpp"
#include "broker/keys.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace outbox::broker {

/// One relay process's note, read at one Redis time.
struct relay_process {
  /// "<host>-<pid>.<start>@<start ms>": the same name as in the consumer
  /// processes.
  std::string process;
  /// "running" (its note holds), "stopped" (it stopped on purpose) or
  /// "silent" (it stopped noting: killed, frozen, or cut off from Redis).
  std::string state;
  /// Relays running at its last note (0 when stopped).
  int relays = 0;
  /// In that state for this long: since it started, or since it stopped.
  /// Silent: since it was last seen.
  std::int64_t for_ms = 0;
  /// Its last note was this long ago.
  std::int64_t seen_ago_ms = 0;
};

/// Every note: running first, then the most recently seen. A key of another
/// type, or a note in another format, reads as none. Throws broker_error.
std::vector<relay_process> read_relay_processes(connection& conn,
                                                const keys& names);

} // namespace outbox::broker
