#pragma once

#include <atomic>
#include <cstdint>
#include <exception>

namespace outbox::actors {

/// Whether a failed store call is an outage worth waiting out rather than a
/// fault: Redis unreachable, timed out or not ready yet (broker_error
/// unavailable), or the database locked by another connection past
/// busy_timeout (store_error busy). Anything else will not heal by waiting.
bool is_outage(const std::exception& e);

} // namespace outbox::actors

namespace outbox::broker {
class broker_error;
}

namespace outbox::actors {

/// Says once per outage (until a write goes through again, see
/// server_states_cleared), at warn, that the Redis at an address is in a
/// state that refuses writes or commands (broker_error::state(): a replica,
/// out of memory...), e.g. "Redis at 127.0.0.1:6379 is read-only (a
/// replica): waiting". Several relays and consumers meet the same state:
/// the operator needs one line naming it, not one per actor. A refusal that
/// arrives within 2 s of the clearing write is a late reply of the same
/// outage and is not said again. Errors that name no state are ignored.
void announce_server_state(const broker::broker_error& e);

/// A write went through: the states announced are over, and a later one
/// (the next failover) is announced again.
void server_states_cleared();

/// A relay, consumer or the coordinator met `e` and will retry. When it is
/// an outage, counts it in `outage_retries` (a run waiting out an outage
/// is not stalled) and announces the server's state, if it names one.
void note_outage(std::atomic<std::int64_t>& outage_retries,
                 const std::exception& e);

} // namespace outbox::actors
