#pragma once

#include "broker/broker_fwd.hpp"
#include "broker/hash_scan.hpp"
#include "broker/keys.hpp"
#include "broker/waiting_entries.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace outbox::broker {

/// What the consumers have done, read back for audits: the dedup records and
/// the effect they applied.
struct inbox_snapshot {
  /// processed: event_id -> result JSON.
  std::map<std::string, std::string> processed;
  /// effects:inventory.reserved: sku -> quantity.
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
  /// and field (`effects:inventory.reserved[kiwi] is not an integer: "x"`):
  /// left out of the maps above and reported by the audit, never thrown.
  std::vector<std::string> malformed{};
  /// Entries that name an event and wait (read_waiting, read before
  /// `processed`), then the events dropped by decision: event_id -> the
  /// first place it was seen.
  std::map<std::string, waiting_place> waiting{};
  /// Read only once something was trimmed (`trimmed_records` > 0), as
  /// `outbox verify` needs them then to tell a trimmed record from a lost
  /// event: aggregate_seq (aggregate_id -> highest seq applied) and the
  /// gaps hash ((aggregate_id, seq) -> mark; seq 0 for an aggregate's
  /// overflow marker). See broker/lua/inbox_options.lua.
  std::map<std::string, std::int64_t> applied_seqs{};
  std::map<std::pair<std::string, std::int64_t>, std::string> gaps{};
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
  /// An entry of `event_id` waiting at `where` (an id may come twice).
  virtual void waiting(const std::string& event_id, waiting_place where) = 0;
  /// One field of aggregate_seq.
  virtual void applied_seq(const std::string& aggregate, std::int64_t seq) = 0;
  /// One field of the gaps hash: seq 0 is the aggregate's overflow marker.
  virtual void gap(const std::string& aggregate, std::int64_t seq,
                   const std::string& mark) = 0;
};

/// Reads the entries that wait (read_waiting), then `processed` (HSCAN, in
/// pages, so a large hash never blocks Redis) and `effects:inventory.reserved`
/// and what was trimmed, and notes whether consumers or a trim were active
/// meanwhile. Waiting entries come first: an entry then either still waits
/// or was applied by the time its record is looked for, so an event found
/// in neither read is lost, not in flight. `processed` and
/// trimmed_aggregates go to `sink` page by page (the snapshot's maps stay
/// empty), so memory holds one page and the per-sku hashes.
inbox_snapshot read_inbox(connection& conn, const keys& names,
                          inbox_sink& sink);

/// The same, with everything in the snapshot's maps (for small inboxes).
inbox_snapshot read_inbox(connection& conn, const keys& names);

} // namespace outbox::broker
