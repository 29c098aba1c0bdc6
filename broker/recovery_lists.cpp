#include "broker/recovery_lists.hpp"

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

std::size_t recover_every_list(connection& conn, const keys& names) {
  reliable_queue queue{conn};
  std::size_t moved = 0;
  for (const auto& [list, target] : find_recovery_lists(conn, names).lists)
    moved += queue.recover(list, target);
  return moved;
}

} // namespace outbox::broker
