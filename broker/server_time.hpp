#pragma once

// Redis's own clock. Dedup records carry it ("at", broker/lua/inbox_apply.lua)
// and consumers' notes expire by it, so ages of what Redis holds are measured
// on it, never on this host's clock.

#include "broker/connection.hpp"

#include <cstdint>

namespace outbox::broker {

/// Redis's clock in ms, from a TIME reply (seconds, microseconds). Throws
/// broker_error: the error of an error reply, rejected for any other reply
/// that is not TIME's.
std::int64_t time_ms(const reply& time);

/// Redis's clock now, in ms (one TIME). Throws broker_error.
std::int64_t server_time_ms(connection& conn);

} // namespace outbox::broker
