#include "actors/relay.hpp"

#include "storage/types.hpp"
#include "tests/actors/actor_fixture.hpp"
#include "text/event_headers.hpp"

#include <gmock/gmock.h>
#include <set>
#include <string>
#include <vector>

// The relay's normal loop and its answers to broker errors. Crashes, lease
// takeovers and shutdown are in relay_lease_test.cpp.

using namespace outbox;
using outbox::test::actor_fixture;

namespace {

using ActorRelay = actor_fixture;
using ActorRelayBroker = actor_fixture;

TEST_F(ActorRelay, ClaimsPublishesInSeqOrderAndAcks) {
  policy_.batch = 4;
  std::vector<std::string> aggregates;
  std::vector<std::string> ids;
  for (auto sku : {"apple", "pear", "plum"}) {
    auto order = place_order(sku, 2);
    aggregates.push_back(order.aggregate_id);
    ids.push_back(order.event_id);
  }
  // Follow-ups interleaved across aggregates, so rowid order is not seq
  // order within one claim.
  for (auto type : {"OrderPaid", "OrderShipped"})
    for (const auto& aggregate : aggregates)
      ids.push_back(
          append(aggregate, type, R"({"note":"x y","n":[1,2]})").event_id);
  auto committed = now();
  advance(5); // published_at must differ from committed_at

  auto relay = spawn_relay(relay_config("relay-1"));
  run();

  // 9 rows, batch 4: two full claims run back to back, then a partial one;
  // nothing waited for a timer.
  ASSERT_EQ(broker_->batches.size(), 3u);
  EXPECT_EQ(broker_->batches[0].size(), 4u);
  EXPECT_EQ(broker_->batches[1].size(), 4u);
  EXPECT_EQ(broker_->batches[2].size(), 1u);
  EXPECT_EQ(metrics_->claims.load(), 3);
  for (const auto& aggregate : aggregates)
    EXPECT_EQ(broker_->seqs_of(aggregate), (std::vector<std::int64_t>{1, 2, 3}))
        << aggregate;
  std::set<std::string> seen;
  for (const auto& entry : broker_->published()) {
    seen.insert(entry.event_id);
    EXPECT_EQ(entry.payload, payload_of(entry.event_id));
    // Every row's headers travel with it: here the traceparent the store
    // gave each event.
    EXPECT_TRUE(text::trace_id_of(entry.headers)) << entry.headers;
    EXPECT_EQ(entry.event_type, entry.seq == 1   ? "OrderPlaced"
                                : entry.seq == 2 ? "OrderPaid"
                                                 : "OrderShipped");
    EXPECT_EQ(entry.committed_at, committed);
    EXPECT_EQ(entry.committed_at, created_at_of(entry.event_id));
    EXPECT_EQ(entry.published_at, now());
  }
  EXPECT_EQ(seen, std::set<std::string>(ids.begin(), ids.end()));
  for (const auto& id : ids) {
    EXPECT_EQ(status_of(id),
              storage::row_status_text(storage::row_status::published))
        << id;
    EXPECT_EQ(owner_of(id), "") << id;
    EXPECT_EQ(published_at_of(id), now()) << id;
    EXPECT_EQ(attempts_of(id), 1) << id;
  }
  EXPECT_EQ(metrics_->enqueued.load(), 9);
  EXPECT_EQ(metrics_->acked.load(), 9);
  EXPECT_EQ(metrics_->fenced_acks_rejected.load(), 0);
}

TEST_F(ActorRelay, IdleRelayBacksOffAndANudgeClaimsAtOnce) {
  auto relay = spawn_relay(relay_config("relay-1"));
  run();
  EXPECT_EQ(metrics_->claims.load(), 1);
  // Empty claims double the poll interval: 10, 20, 40 ms...
  advance(10);
  EXPECT_EQ(metrics_->claims.load(), 2);
  advance(19);
  EXPECT_EQ(metrics_->claims.load(), 2);
  advance(1);
  EXPECT_EQ(metrics_->claims.load(), 3);
  advance(39);
  EXPECT_EQ(metrics_->claims.load(), 3);
  advance(1);
  EXPECT_EQ(metrics_->claims.load(), 4);
  // ...capped at idle_poll_max_ms (100): 80, then 100, 100.
  advance(80 + 100 + 100);
  EXPECT_EQ(metrics_->claims.load(), 7);

  auto order = place_order("apple", 1);
  run();
  EXPECT_EQ(status_of(order.event_id),
            storage::row_status_text(storage::row_status::pending))
      << "nothing claims before the next poll";
  nudge(relay);
  run(); // no time passes
  EXPECT_EQ(metrics_->claims.load(), 8);
  EXPECT_EQ(status_of(order.event_id),
            storage::row_status_text(storage::row_status::published));
  ASSERT_EQ(broker_->published().size(), 1u);
  EXPECT_EQ(broker_->published()[0].event_id, order.event_id);
  // Work resets the backoff: polls are 10 ms apart again.
  advance(10);
  EXPECT_EQ(metrics_->claims.load(), 9);
  advance(10);
  EXPECT_EQ(metrics_->claims.load(), 10);
}

TEST_F(ActorRelay, TwoRelaysKeepEachAggregatesSeqOrder) {
  policy_.batch = 3;
  std::vector<std::string> aggregates;
  for (int i = 0; i < 5; ++i)
    aggregates.push_back(
        place_order("sku-" + std::to_string(i), 1).aggregate_id);
  for (auto type : {"OrderPaid", "OrderShipped"})
    for (const auto& aggregate : aggregates)
      append(aggregate, type);

  auto a_metrics = std::make_shared<metrics::run_metrics>();
  auto b_metrics = std::make_shared<metrics::run_metrics>();
  spawn_relay(relay_config("relay-a", {}, a_metrics));
  spawn_relay(relay_config("relay-b", {}, b_metrics));
  run_interleaved();

  // Both relays worked, every row went out exactly once, and each
  // aggregate's events arrived in seq order whoever carried them.
  EXPECT_GT(a_metrics->acked.load(), 0);
  EXPECT_GT(b_metrics->acked.load(), 0);
  EXPECT_EQ(a_metrics->acked.load() + b_metrics->acked.load(), 15);
  EXPECT_EQ(
      count_status(storage::row_status_text(storage::row_status::published)),
      15);
  auto published = broker_->published();
  EXPECT_EQ(published.size(), 15u);
  for (const auto& entry : published)
    EXPECT_EQ(broker_->times_published(entry.event_id), 1u);
  for (const auto& aggregate : aggregates)
    EXPECT_EQ(broker_->seqs_of(aggregate), (std::vector<std::int64_t>{1, 2, 3}))
        << aggregate;
}

TEST_F(ActorRelayBroker,
       UnavailableBrokerReleasesRowsWithoutSpendingAnAttempt) {
  auto first = place_order("apple", 1);
  auto second = place_order("pear", 1);
  broker_->fail_publishes(1, broker::broker_errc::unavailable);

  spawn_relay(relay_config("relay-1"));
  run();
  EXPECT_EQ(broker_->publish_calls, 1);
  EXPECT_TRUE(broker_->batches.empty());
  EXPECT_EQ(metrics_->publish_errors.load(), 1);
  EXPECT_EQ(metrics_->released.load(), 2);
  for (const auto& id : {first.event_id, second.event_id}) {
    EXPECT_EQ(status_of(id),
              storage::row_status_text(storage::row_status::pending));
    EXPECT_EQ(owner_of(id), "");
    EXPECT_EQ(attempts_of(id), 0) << "the attempt is refunded";
  }

  advance(10); // the next poll
  EXPECT_EQ(broker_->publish_calls, 2);
  EXPECT_EQ(broker_->published().size(), 2u);
  for (const auto& id : {first.event_id, second.event_id}) {
    EXPECT_EQ(status_of(id),
              storage::row_status_text(storage::row_status::published));
    EXPECT_EQ(attempts_of(id), 1);
  }
}

TEST_F(ActorRelayBroker,
       RejectedRowBacksOffThenFailsAndBlocksOnlyItsAggregate) {
  policy_.max_attempts = 3;
  auto poisoned = place_order("apple", 1);
  broker_->poisoned_aggregates.insert(poisoned.aggregate_id);

  auto relay = spawn_relay(relay_config("relay-1"));
  run();
  EXPECT_EQ(broker_->publish_calls, 1);
  EXPECT_EQ(status_of(poisoned.event_id),
            storage::row_status_text(storage::row_status::pending));
  EXPECT_EQ(attempts_of(poisoned.event_id), 1);
  EXPECT_THAT(last_error_of(poisoned.event_id),
              testing::HasSubstr("WRONGTYPE"));

  // While the poisoned row backs off, its aggregate's next event waits
  // behind it and other aggregates flow.
  auto blocked = append(poisoned.aggregate_id, "OrderPaid");
  auto other = place_order("pear", 1);
  nudge(relay);
  run();
  EXPECT_EQ(status_of(other.event_id),
            storage::row_status_text(storage::row_status::published));
  EXPECT_EQ(status_of(blocked.event_id),
            storage::row_status_text(storage::row_status::pending));
  EXPECT_EQ(attempts_of(blocked.event_id), 0);
  EXPECT_EQ(broker_->publish_calls, 2);

  advance(1000);
  EXPECT_EQ(status_of(poisoned.event_id),
            storage::row_status_text(storage::row_status::failed));
  EXPECT_EQ(attempts_of(poisoned.event_id), 3);
  EXPECT_EQ(metrics_->rows_failed.load(), 1);
  // The retries claim the poisoned row with its follow-up: the batch is
  // refused (1 call), then the row alone (1 call) to find who is at fault.
  // Two retries: 2 + 2 x 2 calls, no hot loop.
  EXPECT_EQ(broker_->publish_calls, 6);
  // The follow-up was held back unpublished, its attempts refunded each
  // time: only the poisoned row pays. It waits behind the FAILED row,
  // PENDING, until an operator retries that.
  EXPECT_EQ(status_of(blocked.event_id),
            storage::row_status_text(storage::row_status::pending));
  auto blocked_attempts = attempts_of(blocked.event_id);
  EXPECT_EQ(blocked_attempts, 0);

  auto later = place_order("plum", 1);
  nudge(relay);
  run();
  EXPECT_EQ(status_of(later.event_id),
            storage::row_status_text(storage::row_status::published));
  advance(1000);
  EXPECT_EQ(broker_->publish_calls, 7);
  EXPECT_EQ(broker_->times_published(poisoned.event_id), 0u);
  EXPECT_EQ(broker_->times_published(blocked.event_id), 0u);
  EXPECT_EQ(status_of(blocked.event_id),
            storage::row_status_text(storage::row_status::pending));
  EXPECT_EQ(attempts_of(blocked.event_id), blocked_attempts)
      << "never claimed again behind the FAILED row";
}

TEST_F(ActorRelayBroker,
       RowsPublishedBeforeARefusedRowOfTheirAggregateAreAcked) {
  // One claim: order A (seq 1), A's poison (seq 2), A's next event (seq 3),
  // order B. Only the poison is refused.
  auto order = place_order("apple", 1);
  auto poison = append(order.aggregate_id, "OrderPaid");
  auto behind = append(order.aggregate_id, "OrderShipped");
  auto other = place_order("pear", 1);
  broker_->poisoned_events.insert(poison.event_id);

  spawn_relay(relay_config("relay-1"));
  run();
  // A's first row went out before the poison in the row-by-row pass: it is
  // acknowledged, not left SENDING to expire and be published again.
  EXPECT_EQ(status_of(order.event_id),
            storage::row_status_text(storage::row_status::published));
  EXPECT_EQ(owner_of(order.event_id), "");
  EXPECT_EQ(broker_->times_published(order.event_id), 1u);
  EXPECT_EQ(status_of(other.event_id),
            storage::row_status_text(storage::row_status::published));
  EXPECT_EQ(status_of(poison.event_id),
            storage::row_status_text(storage::row_status::pending));
  EXPECT_EQ(attempts_of(poison.event_id), 1);
  EXPECT_EQ(status_of(behind.event_id),
            storage::row_status_text(storage::row_status::pending));
  EXPECT_EQ(attempts_of(behind.event_id), 0);
  EXPECT_EQ(broker_->times_published(behind.event_id), 0u);
  EXPECT_EQ(broker_->seqs_of(order.aggregate_id),
            (std::vector<std::int64_t>{1}));
}

} // namespace
