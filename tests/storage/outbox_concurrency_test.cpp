#include "storage/order_store.hpp"
#include "support/outbox_stores.hpp"
#include "tests/storage/contract_fixture.hpp"

#include <future>
#include <map>
#include <mutex>
#include <set>
#include <thread>

using namespace outbox::storage;

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

class StorageOutboxStoreConcurrency : public outbox::test::contract_fixture {};
OUTBOX_ON_BOTH_BACKENDS(StorageOutboxStoreConcurrency);

} // namespace

TEST_P(StorageOutboxStoreConcurrency, TwoConnectionsNeverShareAnAggregate) {
  constexpr int aggregates = 40;
  constexpr int events_per_aggregate = 4;
  constexpr int total = aggregates * events_per_aggregate;
  {
    auto writer = db_->orders();
    std::vector<event_request> batch;
    // Round-robin, so every claim sees rows of many aggregates interleaved.
    for (int seq = 1; seq <= events_per_aggregate; ++seq)
      for (int a = 0; a < aggregates; ++a)
        batch.push_back({"agg-" + std::to_string(a), "T", "{}"});
    writer->append_events(batch, 0);
  }
  lease_tracker tracker;
  std::mutex errors_mutex;
  std::vector<std::string> errors;
  auto relay = [&](std::string owner) {
    try {
      auto db = connect();
      outbox::test::outbox_stores store{*db};
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

TEST_P(StorageOutboxStoreConcurrency, AHeadLeasedOnOneConnectionBlocksAnother) {
  db_->orders()->append_events(
      {{"a", "T", "{}"}, {"a", "T", "{}"}, {"b", "T", "{}"}, {"b", "T", "{}"}},
      0);
  auto relay_a = connect(open_mode::existing);
  auto relay_b = connect(open_mode::existing);
  outbox::test::outbox_stores store_a{*relay_a};
  outbox::test::outbox_stores store_b{*relay_b};
  lease_policy policy;
  policy.ttl = 100;
  policy.batch = 1;
  auto held = store_a.claim_batch("relay-a", 0, policy);
  ASSERT_EQ(held.events.size(), 1u);
  auto held_aggregate = held.events[0].aggregate_id;
  EXPECT_EQ(held.events[0].seq, 1);
  // relay-b gets the other aggregate's whole run, never a row behind the
  // head relay-a holds, however often it asks while the lease lives.
  policy.batch = 100;
  auto other = store_b.claim_batch("relay-b", 1, policy);
  ASSERT_EQ(other.events.size(), 2u);
  for (const auto& event : other.events)
    EXPECT_NE(event.aggregate_id, held_aggregate);
  for (millis now = 2; now < 100; now += 20)
    EXPECT_TRUE(store_b.claim_batch("relay-b", now, policy).events.empty());
  // Acknowledged there, the head frees its aggregate here at once.
  EXPECT_EQ(store_a.ack("relay-a", held.leases(), 50).acked, 1);
  auto rest = store_b.claim_batch("relay-b", 51, policy);
  ASSERT_EQ(rest.events.size(), 1u);
  EXPECT_EQ(rest.events[0].aggregate_id, held_aggregate);
  EXPECT_EQ(rest.events[0].seq, 2);
}

TEST_P(StorageOutboxStoreConcurrency,
       RacingClaimsTakeDisjointRunsFromTheHeads) {
  constexpr int relays = 4;
  constexpr int aggregates = 12;
  constexpr int events_per_aggregate = 5;
  std::vector<event_request> batch;
  for (int seq = 1; seq <= events_per_aggregate; ++seq)
    for (int a = 0; a < aggregates; ++a)
      batch.push_back({"agg-" + std::to_string(a), "T", "{}"});
  db_->orders()->append_events(batch, 0);
  // Every relay claims at once, several times, and never acks: only runs
  // from each aggregate's head may be taken, each by one relay.
  std::promise<void> go;
  auto gate = go.get_future().share();
  std::vector<std::future<std::vector<claim>>> running;
  for (int r = 0; r < relays; ++r)
    running.push_back(std::async(std::launch::async, [this, r, gate] {
      auto db = connect(open_mode::existing);
      outbox::test::outbox_stores store{*db};
      lease_policy policy;
      policy.ttl = 1'000'000;
      policy.batch = 7;
      std::vector<claim> claims;
      gate.wait();
      for (int round = 0; round < 5; ++round)
        claims.push_back(
            store.claim_batch("relay-" + std::to_string(r), round, policy));
      return claims;
    }));
  go.set_value();
  std::map<std::string, std::string> holder;             // aggregate -> owner
  std::map<std::string, std::vector<std::int64_t>> seqs; // in claim order
  std::set<std::string> claimed;
  for (auto& relay : running)
    for (const auto& c : relay.get())
      for (const auto& event : c.events) {
        EXPECT_TRUE(claimed.insert(event.event_id).second)
            << event.event_id << " claimed twice";
        auto [it, fresh] = holder.emplace(event.aggregate_id, c.owner);
        EXPECT_EQ(it->second, c.owner) << c.owner << " and " << it->second
                                       << " both hold " << event.aggregate_id;
        seqs[event.aggregate_id].push_back(event.seq);
      }
  EXPECT_FALSE(claimed.empty());
  for (const auto& [aggregate, taken] : seqs)
    for (std::size_t i = 0; i < taken.size(); ++i)
      EXPECT_EQ(taken[i], static_cast<std::int64_t>(i + 1))
          << aggregate << ": a run from the head, in seq order";
  EXPECT_EQ(scalar("SELECT COUNT(*) FROM outbox WHERE status = 'SENDING'"),
            static_cast<std::int64_t>(claimed.size()));
}
