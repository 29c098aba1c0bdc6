#pragma once

#include "broker/keys.hpp"

#include <cstdint>
#include <map>
#include <string>

namespace outbox::broker {

class connection;

/// What the consumers have done, read back for audits: the dedup records and
/// the effect they applied.
struct inbox_snapshot {
  /// processed: event_id -> result JSON.
  std::map<std::string, std::string> processed;
  /// inventory.reserved: sku -> quantity.
  std::map<std::string, std::int64_t> reserved;
};

/// Reads `processed` (HSCAN, in pages) and `inventory.reserved`. Not atomic
/// across the two: audit a drained, quiet pipeline.
inbox_snapshot read_inbox(connection& conn, const keys& names);

} // namespace outbox::broker
