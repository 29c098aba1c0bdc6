#pragma once

// The processes' notes (the consumer processes beside the consumers' lock,
// the relay processes' heartbeats): one Redis hash each, process -> a line
// of times by Redis's clock, read with that clock in one round trip.

#include "broker/broker_fwd.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace outbox::broker {

struct process_notes {
  /// Redis's clock at the reading, ms since the epoch.
  std::int64_t now = 0;
  /// Every {process, note}; none for a key of another type.
  std::vector<std::pair<std::string, std::string>> notes;
};

/// Reads the hash `key` and Redis's clock. Throws broker_error.
process_notes read_process_notes(connection& conn, const std::string& key);

/// How long ago Redis's clock `now` passed `then` (0 for a time ahead).
inline std::int64_t ms_since(std::int64_t then, std::int64_t now) {
  return std::max<std::int64_t>(now - then, 0);
}

/// The notes of the hash `key` that `parse(process, note, now)` reads (an
/// optional: nothing for a note it cannot read or that ran out), in the
/// order of their `rank(process)` (a key compared with <). Throws
/// broker_error.
template <class Process, class Parse, class Rank>
std::vector<Process> read_processes(connection& conn, const std::string& key,
                                    Parse parse, Rank rank) {
  auto read = read_process_notes(conn, key);
  std::vector<Process> found;
  for (const auto& [process, note] : read.notes) {
    std::optional<Process> p = parse(process, note, read.now);
    if (p)
      found.push_back(std::move(*p));
  }
  std::sort(found.begin(), found.end(),
            [&](const auto& a, const auto& b) { return rank(a) < rank(b); });
  return found;
}

} // namespace outbox::broker
