#include "adapters/pipeline_probe.hpp"

#include "actors/log_lines.hpp"
#include "actors/outage.hpp"

#include "audit/pipeline_audit.hpp"
#include "broker/broker_error.hpp"
#include "broker/broker_stats.hpp"
#include "broker/connection.hpp"
#include "broker/consumer_lock.hpp"
#include "broker/recovery_lists.hpp"
#include "broker/reliable_queue.hpp"
#include "storage/database.hpp"
#include "storage/outbox_views.hpp"
#include "storage/sqlite/database.hpp"
#include "storage/store_error.hpp"
#include "storage/types.hpp"

#include <SQLiteCpp/Database.h>
#include <spdlog/spdlog.h>

#include <optional>
#include <utility>
#include <vector>

namespace outbox::adapters {

namespace {

std::int64_t counter_of(const broker::broker_stats& s, const char* name) {
  auto i = s.counters.find(name);
  return i == s.counters.end() ? 0 : i->second;
}

class pipeline_probe : public actors::pipeline_port {
public:
  explicit pipeline_probe(const config::settings& s)
      : names_(s.broker),
        db_(storage::connect(s.db, storage::open_mode::migrated)),
        store_(db_->views()), redis_(s.redis), queue_(redis_) {}

  metrics::pipeline_snapshot snapshot() override {
    metrics::pipeline_snapshot snap;
    try {
      auto stats = store_->stats(storage::wall_clock_now());
      auto count = [&](const char* status) {
        auto i = stats.by_status.find(status);
        return i == stats.by_status.end() ? 0 : i->second;
      };
      snap.orders = stats.orders;
      snap.pending = count(storage::status::pending);
      snap.sending = count(storage::status::sending);
      snap.published = count(storage::status::published);
      snap.failed = count(storage::status::failed);
      snap.oldest_unpublished_age_ms = stats.oldest_unpublished_age;
      for (const auto& held : stats.leases)
        snap.leases.push_back(metrics::lease_holding{held.owner, held.rows,
                                                     held.earliest_expiry});
      snap.outbox_rows =
          snap.pending + snap.sending + snap.published + snap.failed;
    } catch (const std::exception& e) {
      snap.trouble = std::string{"database: "} + e.what();
      snap.outage = actors::is_outage(e);
    }
    try {
      auto redis = broker::read_stats(redis_, names_);
      snap.queued = redis.queued_total();
      snap.in_processing = redis.processing_total();
      snap.processed = redis.processed;
      snap.duplicates = counter_of(redis, "duplicates");
      snap.dead_lettered = counter_of(redis, "dead_lettered");
      snap.order_violations = counter_of(redis, "order_violations");
    } catch (const std::exception& e) {
      // An outage only if every trouble is one: a broken database does not
      // heal by waiting for Redis.
      snap.outage =
          (snap.trouble.empty() || snap.outage) && actors::is_outage(e);
      snap.trouble += (snap.trouble.empty() ? "" : "; ");
      snap.trouble += std::string{"redis: "} + e.what();
    }
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

  std::pair<std::string, bool> audit() override {
    try {
      auto verdict = audit::audit_pipeline(*db_, redis_, names_);
      return {verdict.to_json(), verdict.ok()};
    } catch (const SQLite::Exception&) {
      // The audit reads SQLite directly: a locked database must come out
      // as store_error busy, an outage, like every other store call.
      storage::rethrow_as_store_error(
          "audit", storage::sqlite::connection_of(*db_).getFilename());
    }
  }

private:
  /// Each (processing list, queue) back to its queue, one fenced script
  /// call per list: a process frozen between two lists and woken after
  /// another took the lock over is refused at the next one.
  std::size_t
  recover(const std::vector<std::pair<std::string, std::string>>& lists,
          const std::string& token,
          const actors::pipeline_port::recovery_step& step) {
    auto& queue = fenced_queue(token);
    std::size_t moved = 0;
    for (std::size_t i = 0; i < lists.size(); ++i) {
      std::size_t here = 0;
      try {
        here = queue.recover(lists[i].first, lists[i].second);
      } catch (const broker::broker_error& e) {
        // Redis refused this list (a key of the wrong type under our name):
        // retrying cannot help, and the other lists must still go back.
        // An outage or the fence stops the whole recovery, as before.
        if (e.code() != broker::broker_errc::rejected)
          throw;
        spdlog::warn("recovery leaves {} as it is, Redis refused to move it "
                     "back to {}: {}",
                     actors::loggable(lists[i].first), lists[i].second,
                     actors::loggable(e.what(), 512));
      }
      moved += here;
      if (step)
        step(here, lists.size() - i - 1);
    }
    return moved;
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
  std::optional<broker::reliable_queue> fenced_;
  std::string fenced_token_;
};

} // namespace

std::unique_ptr<actors::pipeline_port>
make_pipeline_probe(const config::settings& s) {
  return std::make_unique<pipeline_probe>(s);
}

} // namespace outbox::adapters
