#include "actors/consumer.hpp"

#include "tests/actors/consumer_fixture.hpp"

#include <algorithm>
#include <string>
#include <vector>

// Redis errors on the consumer's pop, apply and remove: a backoff and a
// recovery of its own processing list, never lost entries nor broken order.

using namespace outbox;

namespace {

using ActorConsumerBroker = test::consumer_fixture;

TEST_F(ActorConsumerBroker, FailedApplyBacksOffRecoversAndKeepsOrder) {
  enqueue_events("a", 3);
  broker_->fail_applies = 1;
  auto exit = watch(spawn_bursting("c-1", 2));
  run();
  EXPECT_FALSE(exit->exited) << "a Redis error is no crash";
  EXPECT_EQ(metrics_->consumer_errors.load(), 1);
  EXPECT_TRUE(broker_->processed.empty());
  EXPECT_EQ(ids_in(processing("c-1")),
            (std::vector<std::string>{"a#1", "a#2"}));

  advance(49, 1); // backing off: the first retry is 50 ms later
  EXPECT_TRUE(broker_->processed.empty());
  EXPECT_EQ(ids_in(queue()), std::vector<std::string>{"a#3"});

  advance(1, 1);
  expect_drained("c-1", 3, 0);
  EXPECT_EQ(metrics_->recovered_entries.load(), 2);
  // Its own processing list was put back before anything new was popped.
  auto recover = std::find(broker_->trace.begin(), broker_->trace.end(),
                           "recover " + processing("c-1"));
  ASSERT_NE(recover, broker_->trace.end());
  EXPECT_EQ(
      std::count(broker_->trace.begin(), recover, "pop " + processing("c-1")),
      2);
}

TEST_F(ActorConsumerBroker, LostPopRepliesDoubleTheBackoffAndLoseNothing) {
  enqueue_events("a", 3);
  broker_->fail_pops = 2;
  spawn_bursting("c-1", 2);
  run();
  // The batch pop moved a#1 and a#2 but its reply was lost.
  EXPECT_EQ(ids_in(processing("c-1")),
            (std::vector<std::string>{"a#1", "a#2"}));
  advance(50, 1); // recovered, popped again, lost again: now 100 ms
  EXPECT_EQ(metrics_->consumer_errors.load(), 2);
  EXPECT_EQ(ids_in(processing("c-1")),
            (std::vector<std::string>{"a#1", "a#2"}));
  EXPECT_EQ(ids_in(queue()), std::vector<std::string>{"a#3"});
  advance(99, 1);
  EXPECT_TRUE(broker_->processed.empty());
  advance(1, 1);
  expect_drained("c-1", 3, 0);
  EXPECT_EQ(metrics_->recovered_entries.load(), 4);
}

TEST_F(ActorConsumerBroker, FailedRemoveRedeliversTheBatchAsDuplicates) {
  enqueue_events("a", 3);
  broker_->fail_removes = 1;
  spawn_bursting("c-1", 2);
  run();
  // Applied, not removed: the batch waits in the processing list.
  EXPECT_EQ(metrics_->consumer_errors.load(), 1);
  EXPECT_EQ(broker_->consumed, 2);
  EXPECT_EQ(ids_in(processing("c-1")),
            (std::vector<std::string>{"a#1", "a#2"}));
  advance(50, 1);
  EXPECT_EQ(metrics_->recovered_entries.load(), 2);
  expect_drained("c-1", 3, 2);
  EXPECT_EQ(metrics_->duplicates_absorbed.load(), 2);
  EXPECT_EQ(metrics_->applied.load(), 3);
  EXPECT_EQ(broker_->reserved["apple"], 1);
}

} // namespace
