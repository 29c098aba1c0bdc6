#include "actors/consumer.hpp"

#include "tests/actors/consumer_fixture.hpp"

#include <algorithm>
#include <string>
#include <vector>

// Injected crashes after the pop and after the effect, and the recovery that
// follows: nothing popped is lost, and what was applied twice is absorbed.

using namespace outbox;
using actors::crash_point;
using outbox::test::crash_at;

namespace {

using ActorConsumerRecovery = test::consumer_fixture;

TEST_F(ActorConsumerRecovery, CrashAfterPopLeavesTheWholeBatchInFlight) {
  enqueue(queue(), "a", 1, "apple", 2);
  enqueue(queue(), "a", 2);
  enqueue(queue(), "a", 3);
  ASSERT_NO_FATAL_FAILURE(expect_injected_crash(
      spawn_bursting("c-1", 2, crash_at(crash_point::consumer_after_pop))));
  EXPECT_EQ(metrics_->injected_crashes.load(), 1);
  // Popped, not applied, not lost: the batch sits in c-1's processing list.
  EXPECT_TRUE(broker_->processed.empty());
  EXPECT_EQ(std::count(broker_->trace.begin(), broker_->trace.end(), "apply 2"),
            0);
  EXPECT_EQ(ids_in(processing("c-1")),
            (std::vector<std::string>{"a#1", "a#2"}));
  EXPECT_EQ(ids_in(queue()), std::vector<std::string>{"a#3"});

  EXPECT_EQ(recover("c-1"), 2u);
  EXPECT_EQ(ids_in(queue()), (std::vector<std::string>{"a#1", "a#2", "a#3"}));
  EXPECT_TRUE(list(processing("c-1")).empty());

  spawn_consumer(consumer_config("c-2"));
  run();
  expect_drained("c-2", 3, 0);
  EXPECT_EQ(broker_->reserved["apple"], 2);
}

TEST_F(ActorConsumerRecovery, CrashAfterPopMidBatchHandlesTheEntriesBefore) {
  enqueue_events("a", 4);
  // One roll per popped entry, as one entry at a time: the third strikes,
  // so the two before it are applied and removed, the rest stay in flight.
  auto crash = crash_at(crash_point::consumer_after_pop, 0.5);
  crash.seed = test::seed_where(crash_point::consumer_after_pop, 0.5,
                                {{"c-1", {false, false, true}}});
  ASSERT_NO_FATAL_FAILURE(
      expect_injected_crash(spawn_consumer(consumer_config("c-1", {}, crash))));
  EXPECT_EQ(metrics_->injected_crashes.load(), 1);
  EXPECT_EQ(std::count(broker_->trace.begin(), broker_->trace.end(), "apply 2"),
            1);
  EXPECT_EQ(broker_->consumed, 2);
  EXPECT_EQ(broker_->aggregate_seq["a"], 2);
  EXPECT_EQ(ids_in(processing("c-1")),
            (std::vector<std::string>{"a#3", "a#4"}));
  EXPECT_TRUE(list(queue()).empty());

  ASSERT_EQ(recover("c-1"), 2u);
  spawn_consumer(consumer_config("c-2"));
  run();
  expect_drained("c-2", 4, 0);
}

TEST_F(ActorConsumerRecovery, CrashAfterEffectGivesADuplicateThatIsAbsorbed) {
  enqueue(queue(), "a", 1, "apple", 2);
  enqueue(queue(), "a", 2);
  enqueue(queue(), "b", 1, "pear", 3);
  enqueue(queue(), "a", 3);
  ASSERT_NO_FATAL_FAILURE(expect_injected_crash(
      spawn_bursting("c-1", 3, crash_at(crash_point::consumer_after_effect))));
  // The first entry's effect went in, then the consumer died before its
  // remove: the batch waits in the processing list, nothing after the
  // striking entry applied.
  EXPECT_EQ(broker_->consumed, 1);
  EXPECT_EQ(broker_->reserved["apple"], 2);
  EXPECT_EQ(broker_->reserved["pear"], 0);
  EXPECT_EQ(ids_in(processing("c-1")),
            (std::vector<std::string>{"a#1", "a#2", "b#1"}));
  EXPECT_EQ(ids_in(queue()), std::vector<std::string>{"a#3"});

  ASSERT_EQ(recover("c-1"), 3u);
  EXPECT_EQ(ids_in(queue()),
            (std::vector<std::string>{"a#1", "a#2", "b#1", "a#3"}))
      << "back at the head, in order";

  spawn_consumer(consumer_config("c-2"));
  run();
  // Processed once, the duplicate absorbed, the effect not doubled.
  EXPECT_EQ(broker_->processed.size(), 4u);
  expect_drained("c-2", 4, 1);
  EXPECT_EQ(metrics_->duplicates_absorbed.load(), 1);
  EXPECT_EQ(metrics_->applied.load(), 4);
  EXPECT_EQ(broker_->reserved["apple"], 2);
  EXPECT_EQ(broker_->reserved["pear"], 3);
}

TEST_F(ActorConsumerRecovery, CrashAfterEffectMidBatchRemovesWhatCameBefore) {
  enqueue_events("a", 4);
  auto crash = crash_at(crash_point::consumer_after_effect, 0.5);
  crash.seed = test::seed_where(crash_point::consumer_after_effect, 0.5,
                                {{"c-1", {false, true}}});
  ASSERT_NO_FATAL_FAILURE(
      expect_injected_crash(spawn_consumer(consumer_config("c-1", {}, crash))));
  // a#1 and a#2 applied in one call, a#1 removed, a#2 left for redelivery.
  EXPECT_EQ(std::count(broker_->trace.begin(), broker_->trace.end(), "apply 2"),
            1);
  EXPECT_EQ(broker_->consumed, 2);
  EXPECT_EQ(ids_in(processing("c-1")),
            (std::vector<std::string>{"a#2", "a#3", "a#4"}));

  ASSERT_EQ(recover("c-1"), 3u);
  spawn_consumer(consumer_config("c-2"));
  run();
  expect_drained("c-2", 4, 1);
}

} // namespace
