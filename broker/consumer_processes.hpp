#pragma once

// The consumer processes as `outbox status` shows them: the one consuming
// and the standbys waiting for the consumers' lock, each with the role it
// has and since when (broker/consumer_lock.hpp notes them).

#include "broker/broker_fwd.hpp"
#include "broker/keys.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace outbox::broker {

/// One consumer process's note.
struct consumer_process {
  /// "<host>-<pid>@<start>", the lock token without its "#<acquisition>".
  std::string process;
  /// "consuming" (holds the lock) or "standby" (waits for it).
  std::string role;
  /// In that role for this long, by Redis's clock.
  std::int64_t for_ms = 0;
  /// The note runs out in this long unless the process renews it.
  std::int64_t expires_in_ms = 0;
  /// Its last renewal was this long ago; nothing for a note of an earlier
  /// version, which did not say.
  std::optional<std::int64_t> seen_ago_ms;
  /// Renewed with the lock ten times a second: a process not seen for half
  /// the note's life (and for a second at least, so a short lease does not
  /// make a slow check look dead) has stopped renewing (killed, frozen, cut
  /// off) even though its lock and note still hold.
  bool stale() const {
    return seen_ago_ms && *seen_ago_ms > expires_in_ms &&
           *seen_ago_ms > stale_after_ms;
  }
  static constexpr std::int64_t stale_after_ms = 1000;
};

/// The notes that have not run out, consuming first, then the longest
/// waiting. A key of another type, or a note in another format, reads as
/// none. Throws broker_error.
std::vector<consumer_process> read_consumer_processes(connection& conn,
                                                      const keys& names);

} // namespace outbox::broker
