#pragma once

#include <cstdint>
#include <string>

namespace outbox::storage {

/// Wall-clock milliseconds since the Unix epoch. Every storage call that
/// depends on time takes it as an argument, so tests drive time explicitly.
using millis = std::int64_t;

/// Milliseconds since the epoch from the system clock, for callers that
/// live in real time (CLI, actors). Storage itself never calls it.
millis wall_clock_now();

/// Lifecycle of an outbox row (DESIGN.md, "Status machine").
namespace status {
inline constexpr const char* pending = "PENDING";
inline constexpr const char* sending = "SENDING";
inline constexpr const char* published = "PUBLISHED";
inline constexpr const char* failed = "FAILED";
} // namespace status

} // namespace outbox::storage
