#pragma once

#include <cstdint>
#include <functional>

namespace outbox::storage {

/// Wall-clock milliseconds since the Unix epoch. Every storage call that
/// depends on time takes it as an argument, so tests drive time explicitly.
using millis = std::int64_t;

/// Milliseconds since the epoch from the system clock, for callers that
/// live in real time (CLI, actors). Storage itself never calls it.
millis wall_clock_now();

/// A source of wall-clock time (wall_clock_now in production; a manual
/// clock in deterministic tests).
using clock_function = std::function<millis()>;

} // namespace outbox::storage
