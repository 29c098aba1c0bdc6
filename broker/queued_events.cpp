#include "broker/queued_events.hpp"

#include "broker/connection.hpp"
#include "broker/entry.hpp"
#include "broker/reliable_queue.hpp"

#include <hiredis/hiredis.h>

#include <cstdint>
#include <variant>
#include <vector>

namespace outbox::broker {

namespace {

constexpr std::int64_t page = 1000;

void collect(connection& conn, const std::string& list,
             std::unordered_set<std::string>& ids) {
  for (std::int64_t start = 0;; start += page) {
    auto entries = conn.command({"LRANGE", list, std::to_string(start),
                                 std::to_string(start + page - 1)});
    for (std::size_t i = 0; i < entries->elements; ++i) {
      auto decoded = decode(reply_text(*entries->element[i]));
      if (auto* entry = std::get_if<event_entry>(&decoded))
        ids.insert(std::move(entry->event_id));
    }
    if (static_cast<std::int64_t>(entries->elements) < page)
      return;
  }
}

} // namespace

std::unordered_set<std::string> queued_event_ids(connection& conn,
                                                 const keys& names) {
  std::unordered_set<std::string> ids;
  for (std::size_t p = 0; p < names.partitions; ++p)
    collect(conn, names.partition(p), ids);
  for (const auto& list :
       reliable_queue{conn}.processing_lists(names.processing_prefix))
    collect(conn, list, ids);
  return ids;
}

} // namespace outbox::broker
