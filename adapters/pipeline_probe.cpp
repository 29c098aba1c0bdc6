#include "adapters/pipeline_probe.hpp"

#include "actors/log_lines.hpp"
#include "actors/outage.hpp"

#include "audit/pipeline_audit.hpp"
#include "broker/broker_error.hpp"
#include "broker/broker_stats.hpp"
#include "broker/connection.hpp"
#include "broker/consumer_lock.hpp"
#include "broker/recovery_lists.hpp"
#include "broker/relay_presence.hpp"
#include "broker/reliable_queue.hpp"
#include "storage/database.hpp"
#include "storage/outbox_counts.hpp"
#include "storage/outbox_views.hpp"
#include "storage/store_error.hpp"
#include "storage/types.hpp"

#include <spdlog/spdlog.h>

#include <optional>
#include <utility>
#include <vector>

namespace outbox::adapters {

namespace {

class pipeline_probe : public actors::pipeline_port {
public:
  explicit pipeline_probe(const config::settings& s)
      : names_(s.broker),
        db_(storage::connect(s.db, storage::open_mode::migrated)),
        store_(db_->views()), redis_(s.redis), queue_(redis_) {}

  metrics::pipeline_snapshot snapshot() override {
    metrics::pipeline_snapshot snap;
    try {
      // Before the counts: a commit between the two moves the mark again.
      snap.database_mark = store_->change_mark();
      auto stats = store_->stats(storage::wall_clock_now());
      storage::copy_outbox_counts(stats, snap);
      snap.oldest_unpublished_age_ms = stats.oldest_unpublished_age;
      for (const auto& held : stats.leases)
        snap.leases.push_back(metrics::lease_holding{held.owner, held.rows,
                                                     held.earliest_expiry});
      snap.outbox_rows =
          snap.pending + snap.sending + snap.published + snap.failed;
    } catch (const std::exception& e) {
      database_trouble(snap, e);
    }
    read_redis(snap);
    return snap;
  }

  metrics::pipeline_snapshot drain_snapshot() override {
    metrics::pipeline_snapshot snap;
    try {
      snap.database_mark = store_->change_mark();
      snap.pending = store_->has_pending_or_sending() ? 1 : 0;
    } catch (const std::exception& e) {
      database_trouble(snap, e);
    }
    // After the database: a row it saw published was pushed before, so
    // its entry is in Redis's figures.
    read_redis(snap);
    return snap;
  }

  std::size_t
  recover_consumer(const std::string& consumer, const std::string& token,
                   const actors::pipeline_port::recovery_step& step) override {
    std::vector<std::pair<std::string, std::string>> lists;
    for (std::size_t i = 0; i < std::max<std::size_t>(names_.partitions, 1);
         ++i) {
      auto queue = names_.partition(i);
      lists.emplace_back(names_.processing_for(queue, consumer), queue);
    }
    return recover(lists, token, step);
  }

  std::size_t
  recover_all(const std::string& token,
              const actors::pipeline_port::recovery_step& step) override {
    auto found = broker::find_recovery_lists(redis_, names_);
    if (!found.foreign.empty())
      spdlog::warn(
          "recovery leaves {} {} under broker.processing_prefix "
          "alone, not processing lists of a configured queue: {}",
          found.foreign.size(), found.foreign.size() == 1 ? "key" : "keys",
          actors::bounded_list(found.foreign, [](const std::string& key) {
            return actors::loggable(key);
          }));
    return recover(found.lists, token, step);
  }

  std::string acquire_consumer_lock(const std::string& token,
                                    std::int64_t ttl_ms) override {
    return lock_.acquire(token, ttl_ms);
  }

  std::string renew_consumer_lock(const std::string& token,
                                  std::int64_t ttl_ms) override {
    return lock_.renew(token, ttl_ms);
  }

  void release_consumer_lock(const std::string& token) override {
    lock_.release(token);
  }

  void note_relays(const std::string& process, int relays,
                   std::int64_t ttl_ms) override {
    presence_.note(process, relays, ttl_ms);
  }

  void relays_stopped(const std::string& process) override {
    presence_.stopped(process);
  }

  metrics::audit_verdict audit() override {
    // A locked database comes out as store_error busy, an outage, like
    // every other store call: the audit turns SQLite's errors itself.
    return audit::audit_pipeline(*db_, redis_, names_);
  }

private:
  static void database_trouble(metrics::pipeline_snapshot& snap,
                               const std::exception& e) {
    snap.trouble = std::string{"database: "} + e.what();
    snap.outage = actors::is_outage(e);
    snap.database_answered = false;
  }

  /// Redis's figures, read after the database's.
  void read_redis(metrics::pipeline_snapshot& snap) {
    try {
      auto redis = broker::read_stats(redis_, names_);
      snap.queued = redis.queued_total();
      snap.in_processing = redis.processing_total();
      snap.queues_settled = redis.settled;
      snap.processed = redis.processed;
      snap.duplicates = redis.counter("duplicates");
      snap.dead_lettered = redis.counter("dead_lettered");
      snap.dead_letter_waiting = redis.dead_letter;
      snap.order_violations = redis.counter("order_violations");
    } catch (const std::exception& e) {
      // An outage only if every trouble is one: a broken database does not
      // heal by waiting for Redis.
      snap.outage =
          (snap.trouble.empty() || snap.outage) && actors::is_outage(e);
      snap.trouble += (snap.trouble.empty() ? "" : "; ");
      snap.trouble += std::string{"redis: "} + e.what();
      snap.redis_answered = false;
    }
  }

  /// Each (processing list, queue) back to its queue under this
  /// acquisition's fence; a list Redis refuses is named and left.
  std::size_t
  recover(const std::vector<std::pair<std::string, std::string>>& lists,
          const std::string& token,
          const actors::pipeline_port::recovery_step& step) {
    return broker::recover_lists(
        fenced_queue(token), lists, names_.counters,
        [](const std::string& list, const std::string& queue,
           const broker::broker_error& e) {
          spdlog::warn("recovery leaves {} as it is, Redis refused to move it "
                       "back to {}: {}",
                       actors::loggable(list), queue,
                       actors::loggable(e.what(), 512));
        },
        step);
  }

  /// A queue carrying this acquisition's fence, made anew when the token
  /// changes (once per acquisition, like the consumers' ports).
  broker::reliable_queue& fenced_queue(const std::string& token) {
    if (!fenced_ || fenced_token_ != token) {
      fenced_.emplace(redis_, broker::fence{names_.consumer_lock(), token});
      fenced_token_ = token;
    }
    return *fenced_;
  }

  broker::keys names_;
  std::unique_ptr<storage::database> db_;
  std::unique_ptr<storage::outbox_views> store_;
  broker::connection redis_;
  broker::reliable_queue queue_;
  broker::consumer_lock lock_{redis_, names_.consumer_lock(),
                              names_.consumer_processes()};
  broker::relay_presence presence_{redis_, names_.relay_processes()};
  std::optional<broker::reliable_queue> fenced_;
  std::string fenced_token_;
};

} // namespace

std::unique_ptr<actors::pipeline_port>
make_pipeline_probe(const config::settings& s) {
  return std::make_unique<pipeline_probe>(s);
}

} // namespace outbox::adapters
