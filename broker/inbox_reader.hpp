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
  /// No consumer applied anything while the two were read (the size of
  /// `processed` was the same before and after), so they match each other.
  bool consistent = true;
};

/// Reads `processed` (HSCAN, in pages, so a large hash never blocks Redis)
/// and `inventory.reserved`, and notes whether consumers were active.
inbox_snapshot read_inbox(connection& conn, const keys& names);

} // namespace outbox::broker
