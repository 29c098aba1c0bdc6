#pragma once

// SHA-1, the digest Redis scripts compute with redis.sha1hex: a consumer
// names the entries it removes by digest instead of sending them back whole.
// Identity, not security: an entry's author gains nothing by a collision
// but the removal of an entry of its own making.

#include <string>

namespace outbox::broker {

/// The SHA-1 of `data`, 40 lowercase hex digits (as redis.sha1hex).
std::string sha1_hex(const std::string& data);

} // namespace outbox::broker
