#include "actors/consumer.hpp"

#include "consumer_fixture.hpp"

#include <algorithm>
#include <string>
#include <vector>

// Injected crashes after the pop and after the effect, and the recovery that
// follows: nothing popped is lost, and what was applied twice is absorbed.

using namespace outbox;
using outbox::test::has_code;

namespace {

config::crash_settings crash_at(actors::crash_point point) {
  config::crash_settings crash;
  if (point == actors::crash_point::consumer_after_pop)
    crash.consumer_after_pop = 1;
  else
    crash.consumer_after_effect = 1;
  return crash;
}

using ActorConsumerRecovery = test::consumer_fixture;

TEST_F(ActorConsumerRecovery, CrashAfterPopLeavesTheWholeBatchInFlight) {
  enqueue(queue(), "a", 1, "apple", 2);
  enqueue(queue(), "a", 2);
  enqueue(queue(), "a", 3);
  auto setup = consumer_config(
      "c-1", {}, crash_at(actors::crash_point::consumer_after_pop));
  setup.burst = 2;
  auto first = spawn_consumer(std::move(setup));
  auto exit = watch(first);
  run();
  ASSERT_TRUE(exit->exited);
  EXPECT_TRUE(has_code(exit->reason, actors::ec::injected_crash))
      << render(exit->reason);
  EXPECT_EQ(metrics_->injected_crashes.load(), 1);
  // Popped, not applied, not lost: the batch sits in c-1's processing list.
  EXPECT_TRUE(broker_->processed.empty());
  EXPECT_EQ(std::count(broker_->trace.begin(), broker_->trace.end(), "apply 2"),
            0);
  EXPECT_EQ(ids_in(processing("c-1")),
            (std::vector<std::string>{"a#1", "a#2"}));
  EXPECT_EQ(ids_in(queue()), std::vector<std::string>{"a#3"});

  test::fake_consume_port port{broker_};
  EXPECT_EQ(port.recover(processing("c-1"), queue()), 2u);
  EXPECT_EQ(ids_in(queue()), (std::vector<std::string>{"a#1", "a#2", "a#3"}));
  EXPECT_TRUE(list(processing("c-1")).empty());

  spawn_consumer(consumer_config("c-2"));
  run();
  EXPECT_EQ(broker_->consumed, 3);
  EXPECT_EQ(broker_->duplicates, 0);
  EXPECT_EQ(broker_->order_violations, 0);
  EXPECT_EQ(broker_->reserved["apple"], 2);
  EXPECT_TRUE(list(queue()).empty());
  EXPECT_TRUE(list(processing("c-2")).empty());
}

TEST_F(ActorConsumerRecovery, CrashAfterPopMidBatchHandlesTheEntriesBefore) {
  for (std::int64_t seq = 1; seq <= 4; ++seq)
    enqueue(queue(), "a", seq);
  // One roll per popped entry, as one entry at a time: the third strikes,
  // so the two before it are applied and removed, the rest stay in flight.
  config::crash_settings crash;
  crash.consumer_after_pop = 0.5;
  crash.seed = test::seed_where(actors::crash_point::consumer_after_pop, 0.5,
                                {{"c-1", {false, false, true}}});
  auto exit = watch(spawn_consumer(consumer_config("c-1", {}, crash)));
  run();
  ASSERT_TRUE(exit->exited);
  EXPECT_EQ(metrics_->injected_crashes.load(), 1);
  EXPECT_EQ(std::count(broker_->trace.begin(), broker_->trace.end(), "apply 2"),
            1);
  EXPECT_EQ(broker_->consumed, 2);
  EXPECT_EQ(broker_->aggregate_seq["a"], 2);
  EXPECT_EQ(ids_in(processing("c-1")),
            (std::vector<std::string>{"a#3", "a#4"}));
  EXPECT_TRUE(list(queue()).empty());

  test::fake_consume_port port{broker_};
  ASSERT_EQ(port.recover(processing("c-1"), queue()), 2u);
  spawn_consumer(consumer_config("c-2"));
  run();
  EXPECT_EQ(broker_->consumed, 4);
  EXPECT_EQ(broker_->duplicates, 0);
  EXPECT_EQ(broker_->order_violations, 0);
  EXPECT_TRUE(list(queue()).empty());
  EXPECT_TRUE(list(processing("c-2")).empty());
}

TEST_F(ActorConsumerRecovery, CrashAfterEffectGivesADuplicateThatIsAbsorbed) {
  enqueue(queue(), "a", 1, "apple", 2);
  enqueue(queue(), "a", 2);
  enqueue(queue(), "b", 1, "pear", 3);
  enqueue(queue(), "a", 3);
  auto setup = consumer_config(
      "c-1", {}, crash_at(actors::crash_point::consumer_after_effect));
  setup.burst = 3;
  auto first = spawn_consumer(std::move(setup));
  auto exit = watch(first);
  run();
  ASSERT_TRUE(exit->exited);
  EXPECT_TRUE(has_code(exit->reason, actors::ec::injected_crash))
      << render(exit->reason);
  // The first entry's effect went in, then the consumer died before its
  // remove: the batch waits in the processing list, nothing after the
  // striking entry applied.
  EXPECT_EQ(broker_->consumed, 1);
  EXPECT_EQ(broker_->reserved["apple"], 2);
  EXPECT_EQ(broker_->reserved["pear"], 0);
  EXPECT_EQ(ids_in(processing("c-1")),
            (std::vector<std::string>{"a#1", "a#2", "b#1"}));
  EXPECT_EQ(ids_in(queue()), std::vector<std::string>{"a#3"});

  test::fake_consume_port port{broker_};
  ASSERT_EQ(port.recover(processing("c-1"), queue()), 3u);
  EXPECT_EQ(ids_in(queue()),
            (std::vector<std::string>{"a#1", "a#2", "b#1", "a#3"}))
      << "back at the head, in order";

  spawn_consumer(consumer_config("c-2"));
  run();
  // Processed once, the duplicate absorbed, the effect not doubled.
  EXPECT_EQ(broker_->processed.size(), 4u);
  EXPECT_EQ(broker_->consumed, 4);
  EXPECT_EQ(broker_->duplicates, 1);
  EXPECT_EQ(metrics_->duplicates_absorbed.load(), 1);
  EXPECT_EQ(metrics_->applied.load(), 4);
  EXPECT_EQ(broker_->reserved["apple"], 2);
  EXPECT_EQ(broker_->reserved["pear"], 3);
  EXPECT_EQ(broker_->order_violations, 0);
  EXPECT_TRUE(list(queue()).empty());
  EXPECT_TRUE(list(processing("c-2")).empty());
}

TEST_F(ActorConsumerRecovery, CrashAfterEffectMidBatchRemovesWhatCameBefore) {
  for (std::int64_t seq = 1; seq <= 4; ++seq)
    enqueue(queue(), "a", seq);
  config::crash_settings crash;
  crash.consumer_after_effect = 0.5;
  crash.seed = test::seed_where(actors::crash_point::consumer_after_effect, 0.5,
                                {{"c-1", {false, true}}});
  auto exit = watch(spawn_consumer(consumer_config("c-1", {}, crash)));
  run();
  ASSERT_TRUE(exit->exited);
  // a#1 and a#2 applied in one call, a#1 removed, a#2 left for redelivery.
  EXPECT_EQ(std::count(broker_->trace.begin(), broker_->trace.end(), "apply 2"),
            1);
  EXPECT_EQ(broker_->consumed, 2);
  EXPECT_EQ(ids_in(processing("c-1")),
            (std::vector<std::string>{"a#2", "a#3", "a#4"}));

  test::fake_consume_port port{broker_};
  ASSERT_EQ(port.recover(processing("c-1"), queue()), 3u);
  spawn_consumer(consumer_config("c-2"));
  run();
  EXPECT_EQ(broker_->consumed, 4);
  EXPECT_EQ(broker_->duplicates, 1);
  EXPECT_EQ(broker_->order_violations, 0);
  EXPECT_TRUE(list(queue()).empty());
  EXPECT_TRUE(list(processing("c-2")).empty());
}

} // namespace
