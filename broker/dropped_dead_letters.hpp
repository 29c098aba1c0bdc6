#pragma once

// The decisions `outbox dead-letters drop` recorded: events an operator
// chose not to apply. `outbox verify` reads them to tell an event given up
// on purpose from one lost.

#include "broker/broker_fwd.hpp"
#include "broker/keys.hpp"

#include <cstdint>
#include <map>
#include <string>

namespace outbox::broker {

/// One decision, as kept in keys::dead_letter_dropped.
struct dropped_dead_letter {
  /// When it was recorded: ms since the epoch, by Redis's clock.
  std::int64_t dropped_at = 0;
  /// The operator's words (--reason); empty when none were given.
  std::string reason;
  /// Why the value is not one `drop` writes (not JSON, no dropped_at...),
  /// for a field someone else wrote; empty when it was read. The field
  /// still names the event as dropped.
  std::string problem;
};

/// Every decision about an event, by event_id, read page by page (HSCAN).
/// Decisions about records without an event_id (the malformed ones) name
/// no event and are left out. Throws broker_error (Redis unreachable, the
/// key not a hash).
std::map<std::string, dropped_dead_letter>
read_dropped_dead_letters(connection& conn, const keys& names);

/// How many decisions are kept (HLEN), malformed records' included.
std::int64_t count_dropped_dead_letters(connection& conn, const keys& names);

} // namespace outbox::broker
