#pragma once

// The top-level ids of a queue entry, read while parsing without building a
// document: an entry that is dead-lettered may be cut short, malformed or
// deeply nested, and whatever came before the trouble is still worth
// naming in a log line or a listing.

#include <cstdint>
#include <optional>
#include <string>

namespace outbox::broker {

/// What could be read of an entry's top level before it ended or broke.
struct entry_head {
  std::optional<std::string> event_id, aggregate_id, event_type;
  std::optional<std::int64_t> seq;
  /// headers.traceparent, as written (not checked).
  std::optional<std::string> traceparent;
};

/// Reads the ids of `text`, never throwing; the first occurrence of a key
/// counts, as for nlohmann's and cjson's decoders.
entry_head read_entry_head(const std::string& text);

} // namespace outbox::broker
