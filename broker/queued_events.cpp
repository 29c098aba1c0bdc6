#include "broker/queued_events.hpp"

#include "broker/connection.hpp"
#include "broker/entry.hpp"
#include "broker/reliable_queue.hpp"

#include <hiredis/hiredis.h>

#include <variant>
#include <vector>

namespace outbox::broker {

namespace {

/// One list in one call: paging with LRANGE while consumers pop from the
/// head would shift entries past the page boundary unseen.
void collect(connection& conn, const std::string& list,
             std::unordered_set<std::string>& ids) {
  auto entries = conn.command({"LRANGE", list, "0", "-1"});
  for (std::size_t i = 0; i < entries->elements; ++i) {
    auto decoded = decode(reply_text(*entries->element[i]));
    if (auto* entry = std::get_if<event_entry>(&decoded))
      ids.insert(std::move(entry->event_id));
  }
}

// Every list under the prefix, not only those recovery moves: keeping the
// record of an event a foreign list holds a copy of costs nothing, and
// trimming it could let that copy apply twice.
void collect_processing(connection& conn, const keys& names,
                        std::unordered_set<std::string>& ids) {
  for (const auto& list :
       reliable_queue{conn}.processing_lists(names.processing_prefix))
    collect(conn, list, ids);
}

} // namespace

std::unordered_set<std::string> queued_event_ids(connection& conn,
                                                 const keys& names) {
  // Entries move between lists while this reads: queue -> processing list
  // (a consumer pops) and back (recovery of a dead consumer's entries).
  // Reading the processing lists before and after the queues sees an entry
  // that made one move during the read, wherever it went.
  std::unordered_set<std::string> ids;
  collect_processing(conn, names, ids);
  for (std::size_t p = 0; p < names.partitions; ++p)
    collect(conn, names.partition(p), ids);
  collect_processing(conn, names, ids);
  return ids;
}

} // namespace outbox::broker
