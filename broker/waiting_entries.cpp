#include "broker/waiting_entries.hpp"

#include "broker/connection.hpp"
#include "broker/dead_letter_record.hpp"
#include "broker/queued_events.hpp"

#include <hiredis/hiredis.h>

namespace outbox::broker {

const char* describe(waiting_place where) {
  switch (where) {
  case waiting_place::queued:
    return "queued";
  case waiting_place::processing:
    return "in a processing list";
  case waiting_place::dead_lettered:
    return "dead-lettered";
  }
  return "?";
}

void read_waiting(
    connection& conn, const keys& names,
    const std::function<void(const std::string&, waiting_place)>& on_entry,
    std::size_t page) {
  // In one LRANGE, as `outbox dead-letters` reads it: a replay removes
  // records from its middle, which would shift a page boundary.
  auto records = conn.command({"LRANGE", names.dead_letter, "0", "-1"});
  for (std::size_t i = 0; i < records->elements; ++i) {
    auto letter = parse_dead_letter(i, reply_text(*records->element[i]));
    if (letter.event_id)
      on_entry(*letter.event_id, waiting_place::dead_lettered);
  }
  visit_in_flight(conn, names, page,
                  [&](const std::string& event_id, bool processing) {
                    on_entry(event_id, processing ? waiting_place::processing
                                                  : waiting_place::queued);
                  });
}

} // namespace outbox::broker
