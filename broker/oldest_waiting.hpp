#pragma once

// How long the oldest entry waiting in the queues has waited: what tells
// "nobody has consumed for a while" from "the consumer is restarting",
// when no process holds the consumers' lock.

#include "broker/broker_fwd.hpp"
#include "broker/keys.hpp"

#include <cstdint>
#include <optional>

namespace outbox::broker {

/// Now (Redis's clock) less the published_at (else committed_at) of the
/// oldest head of the queue lists; nothing when every list is empty. A
/// head without either (garbage, one too big to read here) counts as
/// waiting since forever. Throws broker_error.
std::optional<std::int64_t> oldest_waiting_ms(connection& conn,
                                              const keys& names);

} // namespace outbox::broker
