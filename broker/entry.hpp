#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace outbox::broker {

/// The version of the queue entry's format that encode() writes in `v` and
/// decode() reads (broker/queue_entry.schema.json). An entry without `v`
/// (written before it existed) is version 1. It changes only when a reader
/// of the old version would misread an entry; a new optional field does not
/// change it.
inline constexpr int entry_version = 1;

/// One event as it travels through Redis (docs/inbox-script.md, "Queue
/// entries"): a JSON object {v, event_id, aggregate_id, seq, event_type,
/// payload, headers, committed_at, published_at}, described by
/// broker/queue_entry.schema.json.
struct event_entry {
  std::string event_id;
  std::string aggregate_id;
  std::int64_t seq = 0;
  std::string event_type;
  /// A JSON object's text; embedded as an object, not as a string.
  std::string payload;
  /// Milliseconds since the epoch when the outbox row was committed
  /// (0: unknown); consumers measure commit-to-processed latency from it.
  std::int64_t committed_at = 0;
  /// Milliseconds since the epoch when the relay published it (0: unknown).
  std::int64_t published_at = 0;
  /// The event's headers: a JSON object of strings' text, embedded as an
  /// object; "" for none (the entry has no `headers`). Last, so that
  /// positional initialisers of the fields before it still hold.
  std::string headers = {};
};

/// Serialises an entry, `v` first. Throws std::invalid_argument if payload is
/// not a JSON object, or headers neither "" nor one (the store guarantees
/// both).
std::string encode(const event_entry& entry);

/// Why an entry could not be parsed.
struct malformed_entry {
  std::string reason;
};

/// Whether `text` may be part of a key: valid UTF-8 without control
/// characters (C0, DEL, C1). The inbox script's clean_text() is the same
/// rule; nlohmann refuses invalid UTF-8 before this is asked, so only the
/// controls (escaped as \u001b in JSON) are left to see here.
bool clean_text(const std::string& text);

/// Parses and validates an entry (`v` absent or entry_version, types,
/// non-empty ids, seq >= 1, payload an object, headers absent or an object
/// of strings). The consumer's Lua script
/// applies the same rules in Redis.
std::variant<event_entry, malformed_entry> decode(const std::string& text);

/// The event_id of an entry read without parsing it, when the text leaves no
/// doubt which it is: no backslash anywhere (so no escaped key or quote),
/// `"event_id"` written exactly once, followed at once by `:"`. Nothing
/// otherwise (decode() must tell). For every entry decode() accepts, this
/// is its event_id or nothing; for one it refuses, it may name an id (a
/// caller keeping what such ids name keeps more, never less).
std::optional<std::string_view> plain_event_id(std::string_view text);

/// True when arrays and objects in `text` nest deeper than `limit`
/// (brackets inside strings do not count): a cheap check, without
/// recursion, before parsing text that may be hostile.
bool nested_deeper_than(const std::string& text, std::size_t limit);

} // namespace outbox::broker
