#pragma once

#include "broker/hash_scan.hpp"
#include "broker/keys.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace outbox::broker {

class connection;

/// What the consumers have done, read back for audits: the dedup records and
/// the effect they applied.
struct inbox_snapshot {
  /// processed: event_id -> result JSON.
  std::map<std::string, std::string> processed;
  /// inventory.reserved: sku -> quantity.
  std::map<std::string, std::int64_t> reserved;
  /// No consumer applied anything and no trim ran while they were read (the
  /// size of `processed` and the trimmed count were the same before and
  /// after), so they match each other.
  bool consistent = true;
  /// What `outbox trim` removed (keys::trimmed_summary): how many records,
  /// the latest cutoff (ms; 0 when nothing was ever trimmed: only records
  /// applied before it can be missing), and their OrderPlaced effect.
  std::int64_t trimmed_records = 0;
  std::int64_t trimmed_before = 0;
  std::map<std::string, std::int64_t> trimmed_reserved{};
  /// Records trimmed per aggregate (keys::trimmed_aggregates). Trims of an
  /// older version counted none: trimmed_records minus their sum.
  std::map<std::string, std::int64_t> trimmed_by_aggregate{};
  /// Values that are not what the pipeline writes, each named with its key
  /// and field (`inventory.reserved[kiwi] is not an integer: "x"`): left
  /// out of the maps above and reported by the audit, never thrown.
  std::vector<std::string> malformed{};
};

/// Where read_inbox hands what grows with the events, instead of keeping it.
class inbox_sink {
public:
  virtual ~inbox_sink() = default;
  /// One HSCAN page of `processed`: event_id -> result JSON. A field HSCAN
  /// returns twice comes twice; the first one counts.
  virtual void processed(hash_page& page) = 0;
  /// One field of trimmed_aggregates: records trimmed of `aggregate`.
  virtual void trimmed(const std::string& aggregate, std::int64_t n) = 0;
  /// How many distinct event ids processed() was given.
  virtual std::int64_t processed_count() = 0;
};

/// Reads `processed` (HSCAN, in pages, so a large hash never blocks Redis)
/// and `inventory.reserved` and what was trimmed, and notes whether
/// consumers or a trim were active meanwhile. `processed` and
/// trimmed_aggregates go to `sink` page by page (the snapshot's maps stay
/// empty), so memory holds one page and the per-sku hashes.
inbox_snapshot read_inbox(connection& conn, const keys& names,
                          inbox_sink& sink);

/// The same, with everything in the snapshot's maps (for small inboxes).
inbox_snapshot read_inbox(connection& conn, const keys& names);

} // namespace outbox::broker
