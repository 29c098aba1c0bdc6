#pragma once

// Which keys under broker.processing_prefix recovery may move. Anyone with
// redis-cli can create keys there; recovery moves only the processing lists
// of the configured queues ("<prefix><queue>/<consumer>" with <queue> one
// of the partitions), so a list named after another key ("processed/x")
// or a key of another type is left as it is, never moved or retried.

#include "broker/broker_fwd.hpp"
#include "broker/keys.hpp"

#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace outbox::broker {

class broker_error;
class reliable_queue;

struct recovery_lists {
  /// (processing list, the configured queue it goes back to), by name.
  std::vector<std::pair<std::string, std::string>> lists;
  /// The other keys under the prefix, by name: not a list, or not named
  /// after a configured queue. Recovery leaves them alone.
  std::vector<std::string> foreign;
};

/// Scans the prefix (SCAN, twice: every key, then the lists).
recovery_lists find_recovery_lists(connection& conn, const keys& names);

/// What recover_lists does with a list Redis refuses to move (a key of the
/// wrong type under our name): (list, queue, the refusal).
using refused_list = std::function<void(const std::string&, const std::string&,
                                        const broker_error&)>;
/// Called after each list: (entries it moved, lists still to go).
using recovery_step = std::function<void(std::size_t, std::size_t)>;

/// Moves each (processing list, queue) of `lists` back to its queue through
/// `queue`, counting them in `counters` (keys::counters), one script call
/// per list: with a fenced queue, a process frozen
/// between two lists and woken after another took the lock over is refused
/// at the next one. A list Redis refuses goes to `refused`, when given, and
/// the others still go back (retrying cannot help it); without `refused`,
/// or for an outage or the fence, the error stops the whole recovery.
/// Returns the entries moved. Throws broker_error.
std::size_t
recover_lists(reliable_queue& queue,
              const std::vector<std::pair<std::string, std::string>>& lists,
              const std::string& counters, const refused_list& refused = {},
              const recovery_step& step = {});

/// Puts the entries of every processing list find_recovery_lists finds back
/// at the head of its queue (reliable_queue::recover, unfenced: for a caller
/// that knows no consumer runs, as the lab between its steps). Returns how
/// many entries moved.
std::size_t recover_every_list(connection& conn, const keys& names);

} // namespace outbox::broker
