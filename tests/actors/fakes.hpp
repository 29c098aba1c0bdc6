#pragma once

// In-memory stand-ins for the broker side of the actors (actors/ports.hpp),
// for deterministic actor tests. They share one fake_broker, so what a relay
// publishes is what a consumer pops. Single-threaded: use them on CAF's test
// coordinator, not from detached actors.

#include "actors/ports.hpp"
#include "broker/broker_error.hpp"
#include "broker/entry.hpp"
#include "broker/keys.hpp"

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
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
};

/// A publish_port on a fake_broker: all-or-nothing, like the real publisher.
class fake_publish_port : public actors::publish_port {
public:
  explicit fake_publish_port(std::shared_ptr<fake_broker> broker);

  void publish(const std::vector<broker::event_entry>& entries) override;

private:
  std::shared_ptr<fake_broker> broker_;
};

/// A consume_port on a fake_broker, with the reliable queue's and the inbox
/// script's semantics: pop moves head to processing tail (a batch up to its
/// entry and byte caps, one entry at least), apply dedups by event_id then
/// applies the effect and checks seq order, malformed entries are
/// dead-lettered, remove drops the oldest copy, recover puts in-flight
/// entries back at the queue's head in their order.
class fake_consume_port : public actors::consume_port {
public:
  explicit fake_consume_port(std::shared_ptr<fake_broker> broker);

  /// Never waits: rings when a list behind one of the doorbells has entries.
  bool wait_for_doorbell(const std::vector<std::string>& doorbells,
                         int timeout_ms) override;
  std::vector<std::string> pop_batch(const std::string& queue,
                                     const std::string& processing,
                                     std::size_t max_entries,
                                     std::size_t max_bytes) override;
  broker::applied_entry apply(const std::string& entry) override;
  std::vector<broker::applied_entry>
  apply_batch(const std::vector<std::string>& entries) override;
  void remove(const std::string& processing, const std::string& entry) override;
  std::size_t remove_batch(const std::string& processing,
                           const std::vector<std::string>& entries) override;
  std::size_t recover(const std::string& processing,
                      const std::string& queue) override;

private:
  /// Throws if a pop failure is due (after the move, as a lost reply).
  void throw_if_fenced();
  void maybe_fail_pop();
  /// Throws if an apply failure is due (before anything is applied).
  void maybe_fail_apply();
  /// Throws if a remove failure is due (before anything is removed).
  void maybe_fail_remove();
  /// One entry through the inbox logic, no failure injection.
  broker::applied_entry apply_one(const std::string& entry);
  /// LREM processing 1 entry; whether it was there.
  bool remove_one(const std::string& processing, const std::string& entry);

  std::shared_ptr<fake_broker> broker_;
};

/// A relay_setup::make_publisher that hands out ports on `broker`.
std::function<std::unique_ptr<actors::publish_port>()>
fake_publisher_factory(std::shared_ptr<fake_broker> broker);

/// A consumer_setup::make_port that hands out ports on `broker`.
std::function<std::unique_ptr<actors::consume_port>()>
fake_consume_port_factory(std::shared_ptr<fake_broker> broker);

/// What a fake_pipeline_port reports, and what the coordinator asked of it.
struct fake_pipeline {
  /// What snapshot() returns, unless `source` is set.
  metrics::pipeline_snapshot snapshot;
  /// Computes the snapshot instead (e.g. from the test's database).
  std::function<metrics::pipeline_snapshot()> source;
  int snapshots = 0;
  /// drain_snapshot() calls: the same figures, reduced as the real probe's
  /// are (whether any row is PENDING or SENDING, Redis's counts).
  int drain_reads = 0;
  /// Whether the fake's database has a change mark (SQLite's data_version;
  /// false: as PostgreSQL, which has none).
  bool marked = true;
  /// Every recover_consumer argument, in order.
  std::vector<std::string> recovered_consumers;
  /// Called by recover_consumer (with its argument) before it recovers.
  std::function<void(const std::string&)> on_recover_consumer;
  int recover_all_calls = 0;
  /// The lock token every recovery carried, in order ("" for none). A
  /// recovery with a token other than `lock_holder` is refused list by
  /// list (broker_error fenced), as the fenced recover script would.
  std::vector<std::string> recovery_tokens;
  /// What audit() returns.
  std::pair<std::string, bool> verdict{R"({"ok":true,"checks":[]})", true};
  /// How many audit() calls throw broker_error(unavailable) first.
  int audit_outages = 0;
  /// Who holds the consumers' lock ("" for nobody); ttls are not modelled.
  std::string lock_holder;
  /// acquire and renew throw broker_error(unavailable) while set.
  bool lock_unreachable = false;
  int lock_releases = 0;
  /// Every relay heartbeat: {process, relays}; -1 relays for "stopped".
  std::vector<std::pair<std::string, int>> relay_notes;
  int audits = 0;
  /// Where recovery moves processing lists back (none: count calls only),
  /// and the key names that say which lists those are.
  std::shared_ptr<fake_broker> broker;
  broker::keys names;
};

/// A pipeline_port on a fake_pipeline.
class fake_pipeline_port : public actors::pipeline_port {
public:
  explicit fake_pipeline_port(std::shared_ptr<fake_pipeline> pipeline);

  metrics::pipeline_snapshot snapshot() override;
  metrics::pipeline_snapshot drain_snapshot() override;
  std::size_t recover_consumer(const std::string& consumer,
                               const std::string& token,
                               const recovery_step& step) override;
  std::size_t recover_all(const std::string& token,
                          const recovery_step& step) override;
  std::pair<std::string, bool> audit() override;
  std::string acquire_consumer_lock(const std::string& token,
                                    std::int64_t ttl_ms) override;
  std::string renew_consumer_lock(const std::string& token,
                                  std::int64_t ttl_ms) override;
  void release_consumer_lock(const std::string& token) override;
  void note_relays(const std::string& process, int relays,
                   std::int64_t ttl_ms) override;
  void relays_stopped(const std::string& process) override;

private:
  /// Recovers the processing lists whose consumer name passes `match`, in
  /// name order, each under the fence of `token`.
  std::size_t recover_if(const std::function<bool(const std::string&)>& match,
                         const std::string& token, const recovery_step& step);

  std::shared_ptr<fake_pipeline> pipeline_;
};

/// A coordinator_setup::make_probe that hands out ports on `pipeline`.
std::function<std::unique_ptr<actors::pipeline_port>()>
fake_probe_factory(std::shared_ptr<fake_pipeline> pipeline);

} // namespace outbox::test
