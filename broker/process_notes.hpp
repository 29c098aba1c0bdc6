#pragma once

// The processes' notes (the consumer processes beside the consumers' lock,
// the relay processes' heartbeats): one Redis hash each, process -> a line
// of times by Redis's clock, read with that clock in one round trip.

#include "broker/broker_fwd.hpp"

#include <cstdint>
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

} // namespace outbox::broker
