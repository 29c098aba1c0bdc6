#pragma once

// Before the demo's reservation became an effect (effects/orders.lua) its
// hash was "<key_prefix>inventory.reserved", outside the effects' prefix.
// A keyspace an older version filled keeps it there: a consumer of this
// version merges it into keys::reserved when it starts, and `outbox
// verify` names it while it is left.

#include "broker/broker_fwd.hpp"
#include "broker/keys.hpp"

#include <cstdint>
#include <string>

namespace outbox::broker {

/// "<key_prefix>inventory.reserved".
std::string older_reservation(const keys& names);

/// Adds every field of the older hash to keys::reserved and deletes it, in
/// one script call: how many fields it merged (0 when there was none).
/// Changes nothing, and throws broker_error(rejected) naming the field,
/// when a key has another type or a field is not an integer or the sum
/// would pass 2^53 (a half merge, retried, would add twice).
std::int64_t merge_older_reservation(connection& conn, const keys& names);

} // namespace outbox::broker
