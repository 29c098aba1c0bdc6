#pragma once

#include "broker/broker_fwd.hpp"
#include "broker/keys.hpp"

#include <cstdint>
#include <map>
#include <string>

namespace outbox::broker {

/// What `outbox status` and `outbox verify` read from Redis.
struct broker_stats {
  /// Length of each queue list (one per partition).
  std::map<std::string, std::int64_t> queues;
  /// Length of each non-empty processing list.
  std::map<std::string, std::int64_t> processing;
  std::int64_t processed = 0;   // HLEN processed
  std::int64_t dead_letter = 0; // LLEN dead-letter
  /// Decisions of `outbox dead-letters drop` (HLEN keys::dead_letter_dropped).
  std::int64_t dead_letter_dropped = 0;
  std::map<std::string, std::int64_t> counters;
  /// Who holds the consumers' lock ("" when nobody), and for how much
  /// longer unless renewed (-1: no ttl, it never expires; -2: no lock).
  std::string consumers_holder;
  std::int64_t consumers_ttl_ms = -2;
  /// False when a recovery moved entries back to a queue while the lists
  /// were read: an entry in flight may then be in none of the counts, so
  /// "nothing queued, nothing in processing" is not yet to be believed.
  bool settled = true;

  std::int64_t queued_total() const;
  std::int64_t processing_total() const;
  /// The counter `name` of keys::counters ("duplicates", "dead_lettered",
  /// "order_violations"...); 0 when nothing counted it yet.
  std::int64_t counter(const std::string& name) const;
};

broker_stats read_stats(connection& conn, const keys& names);

/// The `recovered` counter: entries moved back from a dead consumer's
/// processing list to their queue, ever. A read of the lists that it
/// changed across may have missed an entry that moved twice meanwhile.
std::int64_t read_recovered(connection& conn, const keys& names);

} // namespace outbox::broker
