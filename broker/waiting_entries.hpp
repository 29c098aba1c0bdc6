#pragma once

// Where a published event that has no dedup record yet can be: waiting in
// a queue partition, held in a consumer's processing list, or set aside in
// the dead-letter list. `outbox verify` accounts for every published event
// by its id with these, so one in none of them is named as lost, drained
// queues or not.

#include "broker/broker_fwd.hpp"
#include "broker/keys.hpp"

#include <cstddef>
#include <functional>
#include <string>

namespace outbox::broker {

/// `dropped` is no entry: an operator decided the event will not be applied
/// (`outbox dead-letters drop`, dropped_dead_letters.hpp); read_inbox
/// reports those ids after the entries, so the audit accounts for them.
enum class waiting_place { queued, processing, dead_lettered, dropped };

/// Calls `on_entry(event_id, where)` for every entry that names an
/// event_id: the dead-letter list, then the processing lists, the queues
/// and the processing lists again (queued_events.hpp says why that order
/// sees an entry that moved once while they were read), then the
/// dead-letter list again. A replay moves an entry from the dead-letter
/// list to a queue's head, read later; a failed effect moves one from a
/// processing list into it, read again at the end. An id may come more than
/// once; the first place counts. Queues are read in pages of `page` entries.
/// Throws broker_error.
void read_waiting(
    connection& conn, const keys& names,
    const std::function<void(const std::string&, waiting_place)>& on_entry,
    std::size_t page = 1000);

} // namespace outbox::broker
