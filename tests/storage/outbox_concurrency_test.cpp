#include "support/outbox_tables.hpp"

#include "storage/sqlite/order_store.hpp"
#include "storage_fixture.hpp"

#include <map>
#include <mutex>
#include <set>
#include <thread>

using namespace outbox::storage;
using namespace outbox::storage::sqlite;

namespace {

/// What the relays of the test hold, as they report it. A relay records its
/// rows after its claim commits and forgets them before its ack commits, so
/// this is always a subset of what the database says each relay holds.
struct lease_tracker {
  std::mutex mutex;
  std::map<std::string, std::string> holder; // aggregate -> owner
  std::set<std::string> claimed;             // event_ids ever claimed
  std::map<std::string, std::vector<std::int64_t>> seqs; // in claim order
  std::vector<std::string> violations;

  void took(const std::string& owner, const claim& c) {
    std::lock_guard<std::mutex> guard{mutex};
    for (const auto& event : c.events) {
      auto [it, fresh] = holder.emplace(event.aggregate_id, owner);
      if (!fresh && it->second != owner)
        violations.push_back(owner + " and " + it->second + " both hold " +
                             event.aggregate_id);
      if (!claimed.insert(event.event_id).second)
        violations.push_back(owner + " claimed " + event.event_id +
                             " again while its lease was valid");
      seqs[event.aggregate_id].push_back(event.seq);
    }
  }

  void acking(const claim& c) {
    std::lock_guard<std::mutex> guard{mutex};
    for (const auto& event : c.events)
      holder.erase(event.aggregate_id);
  }
};

class StorageOutboxStoreConcurrency : public outbox::test::storage_fixture {};

} // namespace

TEST_F(StorageOutboxStoreConcurrency, TwoConnectionsNeverShareAnAggregate) {
  constexpr int aggregates = 40;
  constexpr int events_per_aggregate = 4;
  constexpr int total = aggregates * events_per_aggregate;
  {
    sqlite::order_store writer{*db_};
    std::vector<event_request> batch;
    // Round-robin, so every claim sees rows of many aggregates interleaved.
    for (int seq = 1; seq <= events_per_aggregate; ++seq)
      for (int a = 0; a < aggregates; ++a)
        batch.push_back({"agg-" + std::to_string(a), "T", "{}"});
    writer.append_events(batch, 0);
  }
  lease_tracker tracker;
  std::mutex errors_mutex;
  std::vector<std::string> errors;
  auto relay = [&](std::string owner) {
    try {
      auto db = open_database(options());
      outbox::test::outbox_tables store{*db};
      lease_policy policy;
      policy.ttl = 1'000'000'000; // never expires during the test
      policy.batch = 7;
      // Bounded: each useful round publishes at least one row.
      for (int round = 0; round < 20 * total; ++round) {
        auto c = store.claim_batch(owner, 1000, policy);
        if (c.events.empty()) {
          if (store.stats(1000).by_status["PUBLISHED"] == total)
            return;
          std::this_thread::yield();
          continue;
        }
        tracker.took(owner, c);
        tracker.acking(c);
        auto acked = store.ack(owner, c.leases(), 1001);
        if (acked.acked != static_cast<int>(c.events.size()))
          throw std::runtime_error(owner + ": ack rejected");
      }
      throw std::runtime_error(owner + ": gave up before the end");
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> guard{errors_mutex};
      errors.push_back(e.what());
    }
  };
  std::thread first{relay, "relay-1"};
  std::thread second{relay, "relay-2"};
  first.join();
  second.join();
  EXPECT_TRUE(errors.empty()) << errors.front();
  EXPECT_TRUE(tracker.violations.empty()) << tracker.violations.front();
  EXPECT_EQ(static_cast<std::size_t>(total), tracker.claimed.size());
  for (const auto& [aggregate, seqs] : tracker.seqs) {
    std::vector<std::int64_t> expected{1, 2, 3, 4};
    EXPECT_EQ(expected, seqs) << aggregate << " claimed out of order";
  }
  EXPECT_EQ(total,
            scalar("SELECT COUNT(*) FROM outbox WHERE status = 'PUBLISHED'"));
}
