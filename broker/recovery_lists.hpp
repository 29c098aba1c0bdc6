#pragma once

// Which keys under broker.processing_prefix recovery may move. Anyone with
// redis-cli can create keys there; recovery moves only the processing lists
// of the configured queues ("<prefix><queue>/<consumer>" with <queue> one
// of the partitions), so a list named after another key ("processed/x")
// or a key of another type is left as it is, never moved or retried.

#include "broker/keys.hpp"

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace outbox::broker {

class connection;

struct recovery_lists {
  /// (processing list, the configured queue it goes back to), by name.
  std::vector<std::pair<std::string, std::string>> lists;
  /// The other keys under the prefix, by name: not a list, or not named
  /// after a configured queue. Recovery leaves them alone.
  std::vector<std::string> foreign;
};

/// Scans the prefix (SCAN, twice: every key, then the lists).
recovery_lists find_recovery_lists(connection& conn, const keys& names);

/// Puts the entries of every processing list find_recovery_lists finds back
/// at the head of its queue (reliable_queue::recover, unfenced: for a caller
/// that knows no consumer runs, as the lab between its steps). Returns how
/// many entries moved.
std::size_t recover_every_list(connection& conn, const keys& names);

} // namespace outbox::broker
