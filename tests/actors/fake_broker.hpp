#pragma once

// The state of a fake Redis that the fake ports share, so that what a relay
// publishes is what a consumer pops. Single-threaded: use it on CAF's test
// coordinator, not from detached actors.

#include "broker/broker_error.hpp"
#include "broker/entry.hpp"

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace outbox::test {

/// The state of a fake Redis: lists, the inbox's hashes and counters (the
/// keys of broker/lua/inbox_options.lua), and a log of every publish call.
struct fake_broker {
  /// Where fake_publish_port pushes encoded entries (one list, no partitions).
  std::string queue = "outbox.events";
  /// Every list by name; front is the head (LPOP side).
  std::map<std::string, std::deque<std::string>> lists;

  // -- publish side --

  /// Every batch the broker accepted, in order, as the relay passed it.
  std::vector<std::vector<broker::event_entry>> batches;
  /// Every publish call, accepted or not.
  int publish_calls = 0;
  /// Called at the start of every publish call, before any failure is
  /// injected: a test's hook into the moment between a claim and its ack.
  std::function<void()> on_publish;
  /// Failure injection: the next `fail_next` publish calls throw `fail_code`.
  int fail_next = 0;
  broker::broker_errc fail_code = broker::broker_errc::unavailable;
  /// A batch holding an entry of one of these aggregates is rejected (as a
  /// WRONGTYPE on its list would be), for as long as it stays in the set.
  std::set<std::string> poisoned_aggregates;
  /// A batch holding one of these events is rejected (as an entry over
  /// broker.max_entry_bytes would be); the rest of its aggregate is not.
  std::set<std::string> poisoned_events;

  // -- inbox side (processed, effects:inventory.reserved, aggregate_seq,
  // counters) --

  /// event_id -> result: the dedup records.
  std::map<std::string, std::string> processed;
  /// sku -> reserved quantity: the effect of OrderPlaced.
  std::map<std::string, std::int64_t> reserved;
  /// aggregate_id -> highest seq applied.
  std::map<std::string, std::int64_t> aggregate_seq;
  /// "<aggregate_id>:<seq>" of seqs an out-of-order first delivery jumped
  /// over (the inbox's gaps hash), until they arrive.
  std::set<std::string> seq_gaps;
  /// Aggregates that jumped over more seqs than the gaps remember (the
  /// inbox's overflow marker): a late seq of theirs is not a duplicate.
  std::set<std::string> seq_overflow;
  /// "<aggregate_id>:<seq>" of events set aside (the gaps hash's 'dead'):
  /// a copy of one is a duplicate.
  std::set<std::string> seq_dead;
  std::int64_t consumed = 0;
  std::int64_t duplicates = 0;
  std::int64_t dead_lettered = 0;
  std::int64_t order_violations = 0;
  /// Dead-lettered entries' reasons, in order.
  std::vector<std::string> dead_letter;
  /// (entry, reason) of each malformed entry dead-lettered: a copy of one
  /// is a duplicate, as the script finds its record in the list.
  std::set<std::pair<std::string, std::string>> dead_malformed;

  // -- consume side failure injection and trace --

  /// The next `fail_pops` pops (single or batch) throw
  /// broker_error(unavailable) after moving what they would have returned to
  /// the processing list, as when LMOVE or the batch script ran but its reply
  /// was lost.
  int fail_pops = 0;
  /// The next `fail_applies` applies (single or batch) throw
  /// broker_error(unavailable) without applying anything.
  int fail_applies = 0;
  /// The next `fail_removes` removes (single or batch) throw
  /// broker_error(unavailable) without removing anything.
  int fail_removes = 0;
  /// While set, batch pops, applies, removes and recovers throw
  /// broker_error(fenced) without moving or applying anything: another
  /// process holds the consumers' lock.
  bool fenced = false;
  /// "pop <processing>" for every entry popped (one per entry of a batch),
  /// "apply <n>" for every apply call of n entries, "remove <processing>"
  /// for every remove call (one per batch) and "recover <processing>" for
  /// every recover call, in order.
  std::vector<std::string> trace;

  /// Makes the next `count` publish calls throw broker_error(code).
  void fail_publishes(int count, broker::broker_errc code);

  /// Every accepted entry, batches flattened, in publish order.
  std::vector<broker::event_entry> published() const;

  /// How many accepted entries carry `event_id`.
  std::size_t times_published(const std::string& event_id) const;

  /// Seqs of `aggregate_id` in publish order.
  std::vector<std::int64_t> seqs_of(const std::string& aggregate_id) const;

  /// The recover script's move, traced: the processing list back at the
  /// head of `queue`, in order; how many entries moved.
  std::size_t move_back(const std::string& processing,
                        const std::string& queue);
};

} // namespace outbox::test
