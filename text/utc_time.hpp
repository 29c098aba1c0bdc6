#pragma once

#include <cstdint>
#include <string>

namespace outbox::text {

/// A moment for people and log shippers alike: "2026-11-29T23:58:12.331Z"
/// (UTC, ISO 8601, milliseconds) for `ms` since the epoch; a moment before
/// 1970 as "<ms> ms".
std::string utc_time(std::int64_t ms);

} // namespace outbox::text
