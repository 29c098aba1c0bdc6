#pragma once

// The dedup record the inbox script writes in `processed` for each event it
// applies (broker/lua/inbox_apply.lua): {"event_type", "aggregate_id", "seq",
// "sku" and "qty" for an OrderPlaced, "at"}. The audit reads its effect from
// it, `outbox trim` its age.

#include <cstdint>
#include <optional>
#include <string>

namespace outbox::broker {

struct applied_record {
  std::string aggregate_id;
  std::int64_t seq = 0;
  /// "" when the record has none (or not a string); likewise sku and qty.
  std::string event_type;
  std::string sku;
  std::int64_t qty = 0;
  /// When it was applied (Redis TIME, ms); nothing when the record does not
  /// say (not an integer, or absent).
  std::optional<std::int64_t> at;
};

/// The record `text` holds; nothing when it is not a JSON object naming a
/// string aggregate_id and an integer seq (not a record the script wrote).
std::optional<applied_record> parse_applied_record(const std::string& text);

} // namespace outbox::broker
