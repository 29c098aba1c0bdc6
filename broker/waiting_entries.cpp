#include "broker/waiting_entries.hpp"

#include "broker/dead_letters.hpp"
#include "broker/queued_events.hpp"

namespace outbox::broker {

namespace {

void note_dead_letters(
    connection& conn, const keys& names,
    const std::function<void(const std::string&, waiting_place)>& on_entry) {
  for (const auto& letter : read_dead_letters(conn, names))
    if (letter.event_id)
      on_entry(*letter.event_id, waiting_place::dead_lettered);
}

} // namespace

void read_waiting(
    connection& conn, const keys& names,
    const std::function<void(const std::string&, waiting_place)>& on_entry,
    std::size_t page) {
  note_dead_letters(conn, names, on_entry);
  visit_in_flight(conn, names, page,
                  [&](const std::string& event_id, bool processing) {
                    on_entry(event_id, processing ? waiting_place::processing
                                                  : waiting_place::queued);
                  });
  // Entries also move into the list (from a processing list, once their
  // effect failed): read again, one that moved so while the lists were
  // read is here now.
  note_dead_letters(conn, names, on_entry);
}

} // namespace outbox::broker
