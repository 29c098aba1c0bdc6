#pragma once

// One record of the dead-letter list as `outbox dead-letters` sees it. The
// inbox script writes {"reason","entry","size","truncated"} (more fields
// may come; they are kept, not refused); anyone with redis-cli can push
// anything else, so a record that is not of that shape is described, never
// thrown.

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace outbox::broker {

/// A dead-letter record, parsed.
struct dead_letter {
  /// Position in the list when read: 0 is the oldest (the head).
  std::size_t index = 0;
  /// The record exactly as stored: the replay script finds it by value.
  std::string record;
  /// Why the record is not one the inbox writes (not JSON, wrong fields);
  /// empty for a well-formed record. The fields below are then empty.
  std::string record_problem;
  /// Why the entry was dead-lettered.
  std::string reason;
  /// The entry, or its first part when truncated. Always valid UTF-8 (see
  /// not_utf8).
  std::string entry;
  /// The entry's size in bytes when it was dead-lettered.
  std::int64_t size = 0;
  /// The inbox kept only the start of a huge entry.
  bool truncated = false;
  /// The record held bytes that are not UTF-8 (in practice the entry's:
  /// cjson copies them as they came), so `entry` is not the exact text.
  /// Outbox never publishes such entries.
  bool not_utf8 = false;
  /// Fields the record has beyond the four above, as JSON text by name.
  std::map<std::string, std::string> extra;
  /// Read from the entry when it has them, even when it is malformed.
  std::optional<std::string> event_id;
  std::optional<std::string> aggregate_id;
  std::optional<std::int64_t> seq;
  std::optional<std::string> event_type;
  /// The trace id of the entry's traceparent header, when it has one.
  std::optional<std::string> trace_id;
  /// Why the entry cannot go back to its queue (truncated, malformed, not
  /// UTF-8, or the record itself malformed); empty when it can.
  std::string not_replayable;

  bool replayable() const { return not_replayable.empty(); }
};

/// Parses the record at `index`. Never throws on bad content.
dead_letter parse_dead_letter(std::size_t index, std::string record);

/// True when `text` is valid UTF-8.
bool is_utf8(const std::string& text);

/// `text` with every byte that is not part of a valid UTF-8 sequence
/// replaced by U+FFFD.
std::string to_utf8(const std::string& text);

} // namespace outbox::broker
