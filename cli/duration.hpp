#pragma once

#include "storage/types.hpp"

#include <optional>
#include <string>

namespace outbox::cli {

/// Milliseconds of "<digits><unit>" with unit ms, s, m, h or d (`500ms`,
/// `30s`, `15m`, `12h`, `7d`); nothing for any other text, or a value past
/// ~290 million years. The retention commands' DURATION.
std::optional<storage::millis> parse_duration(const std::string& text);

/// The value of a DURATION flag of `command`, or nothing after telling on
/// stderr what was expected and what was given (the caller exits 2).
std::optional<storage::millis> duration_flag(const std::string& command,
                                             const std::string& flag,
                                             const std::string& text);

/// A moment for people: "2026-11-29T23:58:12.331Z" (UTC, ISO 8601) for
/// `ms` since the epoch.
std::string format_utc(storage::millis ms);

/// A duration for people: the largest unit that divides it exactly ("7d",
/// "90s", "1500ms").
std::string format_duration(storage::millis ms);

} // namespace outbox::cli
