#pragma once

// The coordinator's side of the relay heartbeats (broker/relay_presence.hpp):
// a process running relays says so about once a second, idle or busy, and
// says it stopped when it stops, so `outbox status` can tell relays that
// are down from relays that have nothing to do.

#include "actors/coordinator_core.hpp"

namespace outbox::actors {

/// How often a process running relays notes its heartbeat: often enough
/// for `status` to show a killed process within seconds, rarely enough to
/// cost Redis nothing.
inline constexpr storage::millis relay_note_interval_ms = 1000;

/// At every check: notes how many relays run now, when a note is due.
/// Never throws: a failed note is logged at debug and tried at the next
/// check (an outage shows through the relays' own errors).
void keep_relay_note(coordinator_core& st);

/// The relays are down for good: the note says "stopped" rather than
/// running out. Never throws.
void note_relays_stopped(coordinator_core& st);

} // namespace outbox::actors
