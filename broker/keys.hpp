#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace outbox::broker {

/// FNV-1a, 64 bits: the same in every process and build (unlike std::hash),
/// so all processes agree on partitions and seeded choices.
std::uint64_t fnv1a_64(const std::string& text);

/// Names of every Redis key the pipeline uses (config section "broker").
/// The defaults are seed 000's: the list `outbox.events` and the hash
/// `processed`.
struct keys {
  /// The event queue; with partitions > 1, partition i is "<queue>.<i>".
  std::string queue = "outbox.events";
  /// Lists per aggregate hash; one consumer owns a partition at a time, which
  /// keeps per-aggregate order with several consumers.
  std::size_t partitions = 1;
  /// Dedup records: event_id -> result JSON.
  std::string processed = "processed";
  /// The demo's reservation, sku -> reserved quantity: the hash the
  /// built-in effects (effects/orders.lua) write, under effects_prefix().
  /// Not a setting: the effect names it.
  std::string reserved = "effects:inventory.reserved";
  /// aggregate_id -> highest seq applied, for order checking.
  std::string aggregate_seq = "outbox.aggregate_seq";
  /// Counters: consumed, duplicates, dead_lettered, order_violations.
  std::string counters = "outbox.counters";
  /// Entries that could not be applied, with the reason.
  std::string dead_letter = "outbox.dead_letter";
  /// Prefix of consumers' processing lists: "<prefix><consumer name>".
  std::string processing_prefix = "outbox.processing.";
  /// Not a key name but a rule of the same section: the largest encoded
  /// entry the publisher sends. A bigger one is refused before any Redis
  /// call, so the relay backs its row off and it ends FAILED (poison event).
  std::size_t max_entry_bytes = 1 << 20;
  /// The consumer's rule, not the relay's: the largest queue entry a
  /// consumer takes. A bigger one is dead-lettered by the pop, truncated,
  /// and cannot be replayed, so it must stay at or above the largest
  /// max_entry_bytes any relay ran with; validation keeps it at or above
  /// this process's max_entry_bytes. Its default leaves room to raise the
  /// publishing limit (e.g. to let a FAILED row through) without losing the
  /// event at a consumer that still runs with the defaults.
  std::size_t max_consume_bytes = 16u << 20;
  /// The broker.key_prefix already put before the names above ("" when
  /// none): a processing list names its queue without it, so the prefix
  /// appears once in "<prefix>outbox.processing.outbox.events.0/<consumer>".
  std::string key_prefix;

  /// The list an aggregate's events go to.
  std::string queue_for(const std::string& aggregate_id) const;
  /// The list of partition `index`.
  std::string partition(std::size_t index) const;
  /// The processing list of a consumer for one queue list:
  /// "<processing_prefix><queue without key_prefix>/<consumer>". Naming the
  /// queue in it lets recovery put a dead consumer's entries back where they
  /// came from.
  std::string processing_for(const std::string& queue,
                             const std::string& consumer) const;
  /// The doorbell of a queue list: the publisher pushes a token (at most one
  /// is kept) with every publish, so an idle consumer owning several lists
  /// can block on all their doorbells at once (BLPOP) instead of on one list.
  std::string doorbell_for(const std::string& list) const;
  /// What `outbox trim` removed from `processed`: a hash with `records`
  /// (how many) and `before` (the latest cutoff: only records applied
  /// before it can be gone), "<processed>.trimmed".
  std::string trimmed_summary() const;
  /// Where effects' keys live (consumer.effects_lua's store.key):
  /// "<key_prefix>effects:".
  std::string effects_prefix() const;
  /// The effect of trimmed OrderPlaced records, sku -> qty, so the
  /// reservation check still adds up: "<processed>.trimmed_reserved".
  std::string trimmed_reserved() const;
  /// How many records `outbox trim` deleted per aggregate, aggregate_id ->
  /// count, so `outbox verify` sees an event applied again after its record
  /// went (applied_once), and, for an aggregate whose gaps overflowed,
  /// excuses no more missing records than were trimmed:
  /// "<processed>.trimmed_aggregates".
  std::string trimmed_aggregates() const;
  /// Decisions of `outbox dead-letters drop`, event_id -> {"dropped_at",
  /// "reason", "record", ...}: events an operator chose not to apply, kept
  /// so `outbox verify` tells them from lost ones:
  /// "<dead_letter>.dropped".
  std::string dead_letter_dropped() const;
  /// Seqs an out-of-order first delivery jumped over, "<aggregate_id>:<seq>"
  /// -> 1 until they arrive: "<aggregate_seq>.gaps". Empty while order holds.
  std::string seq_gaps() const;
  /// Who consumes the queues now: one process at a time holds this lock,
  /// renewed while it lives; its pops and applies are fenced by it
  /// (broker/fence.hpp): "<queue>.consumers".
  std::string consumer_lock() const;
  /// Every consumer process's note, renewed with the lock: process ->
  /// "<consuming|standby> <since ms> <until ms> <seen ms> <until ms>"
  /// (Redis time; until twice, where earlier versions read it: third and
  /// last), so `outbox status` lists the standbys too and tells a stale
  /// one: "<queue>.consumers.processes".
  std::string consumer_processes() const;
  /// Every relay process's heartbeat, noted about once a second while it
  /// runs and marked stopped when it stops: process -> "<running|stopped>
  /// <relays> <since ms> <seen ms> <until ms>" (Redis time; kept a day after
  /// it was last seen), so `outbox status` lists idle relays and the gone
  /// ones too: "<queue>.relays".
  std::string relay_processes() const;
  /// The partition count the first relay or consumer process recorded
  /// (SET NX), "<queue>.partitions": processes with another count refuse to
  /// start, so a rolling deploy never sends one aggregate to two lists.
  std::string partitions_record() const;
  /// The partitions consumer slot `index` of `consumers` owns: partition p
  /// goes to slot p mod consumers.
  std::vector<std::string> owned_partitions(std::size_t index,
                                            std::size_t consumers) const;
  /// The queue a processing list belongs to; nothing if `list` is not one.
  /// Reads the names of earlier versions too, which held key_prefix twice
  /// ("<key_prefix>outbox.processing.<key_prefix>outbox.events/c"), so an
  /// upgraded process recovers what an older one left in flight.
  std::optional<std::string> queue_of(const std::string& list) const;
  /// Whether `list` is one of the configured queue lists.
  bool is_partition(const std::string& list) const;
};

} // namespace outbox::broker
