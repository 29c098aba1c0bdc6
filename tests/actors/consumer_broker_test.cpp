#include "actors/consumer.hpp"

#include "consumer_fixture.hpp"

#include <algorithm>
#include <string>
#include <vector>

// Redis errors on the consumer's pop, apply and remove: a backoff and a
// recovery of its own processing list, never lost entries nor broken order.

using namespace outbox;

namespace {

using ActorConsumerBroker = test::consumer_fixture;

TEST_F(ActorConsumerBroker, FailedApplyBacksOffRecoversAndKeepsOrder) {
  enqueue(queue(), "a", 1, "apple", 1);
  enqueue(queue(), "a", 2);
  enqueue(queue(), "a", 3);
  broker_->fail_applies = 1;
  auto setup = consumer_config("c-1");
  setup.burst = 2;
  auto consumer = spawn_consumer(std::move(setup));
  auto exit = watch(consumer);
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
  EXPECT_EQ(broker_->consumed, 3);
  EXPECT_EQ(broker_->duplicates, 0);
  EXPECT_EQ(broker_->order_violations, 0);
  EXPECT_EQ(metrics_->recovered_entries.load(), 2);
  EXPECT_TRUE(list(queue()).empty());
  EXPECT_TRUE(list(processing("c-1")).empty());
  // Its own processing list was put back before anything new was popped.
  auto recover = std::find(broker_->trace.begin(), broker_->trace.end(),
                           "recover " + processing("c-1"));
  ASSERT_NE(recover, broker_->trace.end());
  EXPECT_EQ(
      std::count(broker_->trace.begin(), recover, "pop " + processing("c-1")),
      2);
}

TEST_F(ActorConsumerBroker, LostPopRepliesDoubleTheBackoffAndLoseNothing) {
  enqueue(queue(), "a", 1, "apple", 1);
  enqueue(queue(), "a", 2);
  enqueue(queue(), "a", 3);
  broker_->fail_pops = 2;
  auto setup = consumer_config("c-1");
  setup.burst = 2;
  spawn_consumer(std::move(setup));
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
  EXPECT_EQ(broker_->consumed, 3);
  EXPECT_EQ(broker_->order_violations, 0);
  EXPECT_EQ(broker_->duplicates, 0);
  EXPECT_EQ(metrics_->recovered_entries.load(), 4);
  EXPECT_TRUE(list(queue()).empty());
  EXPECT_TRUE(list(processing("c-1")).empty());
}

TEST_F(ActorConsumerBroker, FailedRemoveRedeliversTheBatchAsDuplicates) {
  enqueue(queue(), "a", 1, "apple", 1);
  enqueue(queue(), "a", 2);
  enqueue(queue(), "a", 3);
  broker_->fail_removes = 1;
  auto setup = consumer_config("c-1");
  setup.burst = 2;
  spawn_consumer(std::move(setup));
  run();
  // Applied, not removed: the batch waits in the processing list.
  EXPECT_EQ(metrics_->consumer_errors.load(), 1);
  EXPECT_EQ(broker_->consumed, 2);
  EXPECT_EQ(ids_in(processing("c-1")),
            (std::vector<std::string>{"a#1", "a#2"}));
  advance(50, 1);
  EXPECT_EQ(metrics_->recovered_entries.load(), 2);
  EXPECT_EQ(broker_->consumed, 3);
  EXPECT_EQ(broker_->duplicates, 2);
  EXPECT_EQ(metrics_->duplicates_absorbed.load(), 2);
  EXPECT_EQ(metrics_->applied.load(), 3);
  EXPECT_EQ(broker_->reserved["apple"], 1);
  EXPECT_EQ(broker_->order_violations, 0);
  EXPECT_TRUE(list(queue()).empty());
  EXPECT_TRUE(list(processing("c-1")).empty());
}

} // namespace
