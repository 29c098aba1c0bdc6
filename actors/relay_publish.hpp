#pragma once

// A relay's publish step: the lease checks before the broker call (run out
// by the relay's own clock, renewal due, lost), the call itself, a Redis
// outage or refusal, the crash point after it, and the fenced ack.

#include "actors/relay_context.hpp"
#include "actors/relay_next.hpp"
#include "storage/types.hpp"

#include <optional>

namespace outbox::actors {

/// Publishes a claimed batch and acknowledges it. Returns what to do next
/// when the batch stops short of its ack: dropped (its lease ran out or was
/// lost: claim now), Redis away or refusing the command (idle backoff), an
/// injected crash; nothing once it is acked. A zombie (an injected pause)
/// stands for a pause the relay cannot see, such as a paused virtual
/// machine: it skips the lease checks, and the fence must stop it. Throws
/// storage::store_error when the database does not answer; what it did
/// not take is kept in relay.unsettled then.
std::optional<relay_next> publish_and_ack(relay_context& relay,
                                          const storage::claim& claimed,
                                          bool zombie);

} // namespace outbox::actors
