#include "broker/recovery_lists.hpp"

#include "broker/broker_error.hpp"
#include "broker/key_scan.hpp"
#include "broker/reliable_queue.hpp"

#include <algorithm>
#include <set>

namespace outbox::broker {

recovery_lists find_recovery_lists(connection& conn, const keys& names) {
  std::set<std::string> queues;
  for (std::size_t i = 0; i < std::max<std::size_t>(names.partitions, 1); ++i)
    queues.insert(names.partition(i));
  auto all = scan_prefix(conn, names.processing_prefix);
  auto lists = scan_prefix(conn, names.processing_prefix, "list");
  std::set<std::string> is_list(lists.begin(), lists.end());
  recovery_lists found;
  for (auto& key : all) {
    auto queue = names.queue_of(key);
    if (queue && queues.count(*queue) != 0 && is_list.count(key) != 0)
      found.lists.emplace_back(key, *queue);
    else
      found.foreign.push_back(key);
  }
  // A list created between the two scans is in `lists` only: the next
  // recovery sees it.
  return found;
}

std::size_t
recover_lists(reliable_queue& queue,
              const std::vector<std::pair<std::string, std::string>>& lists,
              const std::string& counters, const refused_list& refused,
              const recovery_step& step) {
  std::size_t moved = 0;
  for (std::size_t i = 0; i < lists.size(); ++i) {
    std::size_t here = 0;
    try {
      here = queue.recover(lists[i].first, lists[i].second, counters);
    } catch (const broker_error& e) {
      if (!refused || e.code() != broker_errc::rejected)
        throw;
      refused(lists[i].first, lists[i].second, e);
    }
    moved += here;
    if (step)
      step(here, lists.size() - i - 1);
  }
  return moved;
}

std::size_t recover_every_list(connection& conn, const keys& names) {
  reliable_queue queue{conn};
  return recover_lists(queue, find_recovery_lists(conn, names).lists,
                       names.counters);
}

} // namespace outbox::broker
