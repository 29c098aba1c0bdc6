#include "broker/queued_events.hpp"

#include "broker/connection.hpp"
#include "broker/entry.hpp"
#include "broker/reliable_queue.hpp"

#include <hiredis/hiredis.h>

#include <variant>

namespace outbox::broker {

namespace {

/// Called with each entry's text as it was read, and whether it came from
/// a processing list.
using entry_visitor = std::function<void(const std::string&, bool)>;

/// Hands every entry of one LRANGE reply to `visit`.
void note(const redisReply& entries, bool processing,
          const entry_visitor& visit) {
  for (std::size_t i = 0; i < entries.elements; ++i)
    visit(reply_text(*entries.element[i]), processing);
}

/// A queue, page by page from its tail. Relays append at the tail and
/// consumers take from the head, so, counted from the tail (negative
/// indexes), an entry only moves further away (appends) or the list ends
/// sooner (pops): a page may repeat an entry, never skip one. What is pushed
/// back at the head (recovery, a dead-letter replay) comes from a processing
/// list or was not delivered yet; processing lists are read around the
/// queues.
void collect_queue(connection& conn, const std::string& queue, std::size_t page,
                   const entry_visitor& visit) {
  auto size = static_cast<long long>(page);
  for (long long last = -1;; last -= size) {
    auto entries =
        conn.command({"LRANGE", queue, std::to_string(last - size + 1),
                      std::to_string(last)});
    note(*entries, false, visit);
    if (entries->elements < page)
      return;
  }
}

/// Each processing list in one call: it holds one consumer's burst at most,
/// and an ack may remove an entry from its middle (LREM), which would shift
/// entries past a page boundary unseen.
/// Every list under the prefix, not only those recovery moves: keeping the
/// record of an event a foreign list holds a copy of costs nothing, and
/// trimming it could let that copy apply twice.
void collect_processing(connection& conn, const keys& names,
                        const entry_visitor& visit) {
  for (const auto& list :
       reliable_queue{conn}.processing_lists(names.processing_prefix))
    note(*conn.command({"LRANGE", list, "0", "-1"}), true, visit);
}

/// Every entry of the queue partitions and processing lists, as
/// visit_in_flight reads them.
void read_in_flight(connection& conn, const keys& names, std::size_t page,
                    const entry_visitor& visit) {
  // Entries move between lists while this reads: queue -> processing list
  // (a consumer pops) and back (recovery of a dead consumer's entries).
  // Reading the processing lists before and after the queues sees an entry
  // that made one move during the read, wherever it went. One that made
  // two (popped after the first read of the processing lists, then
  // recovered to its queue's head after that page was read) is missed; the
  // inbox script's seq rule is what absorbs such a copy (see Retention).
  collect_processing(conn, names, visit);
  for (std::size_t p = 0; p < names.partitions; ++p)
    collect_queue(conn, names.partition(p), page, visit);
  collect_processing(conn, names, visit);
}

} // namespace

void visit_in_flight(
    connection& conn, const keys& names, std::size_t page,
    const std::function<void(const std::string&, bool)>& visit) {
  read_in_flight(conn, names, page,
                 [&](const std::string& text, bool processing) {
                   auto decoded = decode(text);
                   if (auto* entry = std::get_if<event_entry>(&decoded))
                     visit(entry->event_id, processing);
                 });
}

std::unordered_set<std::string>
queued_among(connection& conn, const keys& names,
             const std::unordered_set<std::string>& wanted, std::size_t page) {
  std::unordered_set<std::string> found;
  if (wanted.empty())
    return found;
  auto note_wanted = [&](const std::string& event_id) {
    if (wanted.count(event_id) != 0)
      found.insert(event_id);
  };
  read_in_flight(conn, names, page, [&](const std::string& text, bool) {
    // Most entries are as relays write them: their id is read without
    // parsing them (a backlog of many entries is read once per gathered
    // batch). The others are decoded, as visit_in_flight does.
    if (auto id = plain_event_id(text)) {
      note_wanted(std::string{*id});
      return;
    }
    auto decoded = decode(text);
    if (auto* entry = std::get_if<event_entry>(&decoded))
      note_wanted(entry->event_id);
  });
  return found;
}

std::vector<std::string>
not_queued(connection& conn, const keys& names,
           const std::unordered_set<std::string>& candidates,
           std::int64_t& kept_queued) {
  auto queued = queued_among(conn, names, candidates);
  std::vector<std::string> forgettable;
  for (const auto& id : candidates) {
    if (queued.count(id) != 0)
      ++kept_queued;
    else
      forgettable.push_back(id);
  }
  return forgettable;
}

} // namespace outbox::broker
