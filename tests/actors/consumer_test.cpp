#include "actors/consumer.hpp"

#include "pipeline_fixture.hpp"

#include <algorithm>
#include <deque>
#include <string>
#include <vector>

// The consumer on the fake reliable queue: pop -> dedup+effect -> remove,
// injected crashes at both points and the recovery that follows, several
// owned queues, and Redis errors that must cost neither entries nor order.

using namespace outbox;
using outbox::test::has_code;
using outbox::test::pipeline_fixture;

namespace {

config::crash_settings crash_at(actors::crash_point point) {
  config::crash_settings crash;
  if (point == actors::crash_point::consumer_after_pop)
    crash.consumer_after_pop = 1;
  else
    crash.consumer_after_effect = 1;
  return crash;
}

class consumer_base : public pipeline_fixture {
protected:
  const std::string& queue() const { return broker_->queue; }
  std::string processing(const std::string& consumer,
                         const std::string& queue_name = "") {
    broker::keys names;
    names.queue = broker_->queue;
    return names.processing_for(queue_name.empty() ? queue() : queue_name,
                                consumer);
  }
  std::deque<std::string>& list(const std::string& name) {
    return broker_->lists[name];
  }
  /// The event ids of a list, head first.
  std::vector<std::string> ids_in(const std::string& name) {
    std::vector<std::string> ids;
    for (const auto& text : list(name))
      ids.push_back(
          std::get<broker::event_entry>(broker::decode(text)).event_id);
    return ids;
  }
};

using ActorConsumerQueue = consumer_base;
using ActorConsumerRecovery = consumer_base;
using ActorConsumerBroker = consumer_base;

TEST_F(ActorConsumerQueue, DrainsTheQueueApplyingEachEntryOnce) {
  enqueue(broker_->queue, "a", 1, "apple", 2);
  enqueue(broker_->queue, "b", 1, "pear", 3);
  enqueue(broker_->queue, "a", 2);
  enqueue(broker_->queue, "b", 2);
  enqueue(broker_->queue, "a", 3);
  auto consumer = spawn_consumer(consumer_config("c-1"));
  auto exit = watch(consumer);
  run();
  EXPECT_TRUE(list(queue()).empty());
  EXPECT_TRUE(list(processing("c-1")).empty());
  EXPECT_EQ(broker_->processed.size(), 5u);
  EXPECT_EQ(broker_->consumed, 5);
  EXPECT_EQ(broker_->duplicates, 0);
  EXPECT_EQ(broker_->order_violations, 0);
  EXPECT_EQ(broker_->reserved["apple"], 2);
  EXPECT_EQ(broker_->reserved["pear"], 3);
  EXPECT_EQ(broker_->aggregate_seq["a"], 3);
  EXPECT_EQ(broker_->aggregate_seq["b"], 2);
  EXPECT_EQ(metrics_->applied.load(), 5);
  EXPECT_EQ(metrics_->commit_to_processed.summary().samples, 5);

  // Idle, it keeps polling: a later entry is applied without a nudge.
  enqueue(broker_->queue, "b", 3);
  advance(10);
  EXPECT_FALSE(exit->exited);
  EXPECT_EQ(broker_->consumed, 6);
  EXPECT_EQ(broker_->aggregate_seq["b"], 3);
  EXPECT_TRUE(list(queue()).empty());
}

TEST_F(ActorConsumerQueue, KeepsEachAggregatesOrderAcrossOwnedQueues) {
  // Two owned queues, two aggregates on each, entries interleaved; bursts
  // smaller than the backlog so the consumer switches queues often.
  for (std::int64_t seq = 1; seq <= 4; ++seq)
    for (auto [q, aggregate] :
         {std::pair{"q.0", "a"}, {"q.1", "c"}, {"q.0", "b"}, {"q.1", "d"}})
      enqueue(q, aggregate, seq);
  auto setup = consumer_config("c-1", {"q.0", "q.1"});
  setup.burst = 3;
  spawn_consumer(std::move(setup));
  run();
  EXPECT_EQ(broker_->consumed, 16);
  EXPECT_EQ(broker_->order_violations, 0);
  for (auto aggregate : {"a", "b", "c", "d"})
    EXPECT_EQ(broker_->aggregate_seq[aggregate], 4) << aggregate;
  for (auto q : {"q.0", "q.1"}) {
    EXPECT_TRUE(list(q).empty()) << q;
    EXPECT_TRUE(list(processing("c-1", q)).empty()) << q;
  }
}

TEST_F(ActorConsumerRecovery, CrashAfterPopLeavesTheEntryInFlight) {
  enqueue(queue(), "a", 1, "apple", 2);
  enqueue(queue(), "a", 2);
  auto first = spawn_consumer(consumer_config(
      "c-1", {}, crash_at(actors::crash_point::consumer_after_pop)));
  auto exit = watch(first);
  run();
  ASSERT_TRUE(exit->exited);
  EXPECT_TRUE(has_code(exit->reason, actors::ec::injected_crash))
      << render(exit->reason);
  EXPECT_EQ(metrics_->injected_crashes.load(), 1);
  // Popped, not applied, not lost: it sits in c-1's processing list.
  EXPECT_TRUE(broker_->processed.empty());
  EXPECT_EQ(ids_in(processing("c-1")), std::vector<std::string>{"a#1"});
  EXPECT_EQ(ids_in(queue()), std::vector<std::string>{"a#2"});

  test::fake_consume_port port{broker_};
  EXPECT_EQ(port.recover(processing("c-1"), queue()), 1u);
  EXPECT_EQ(ids_in(queue()), (std::vector<std::string>{"a#1", "a#2"}));
  EXPECT_TRUE(list(processing("c-1")).empty());

  spawn_consumer(consumer_config("c-2"));
  run();
  EXPECT_EQ(broker_->consumed, 2);
  EXPECT_EQ(broker_->duplicates, 0);
  EXPECT_EQ(broker_->order_violations, 0);
  EXPECT_EQ(broker_->reserved["apple"], 2);
  EXPECT_TRUE(list(queue()).empty());
  EXPECT_TRUE(list(processing("c-2")).empty());
}

TEST_F(ActorConsumerRecovery, CrashAfterEffectGivesADuplicateThatIsAbsorbed) {
  enqueue(queue(), "a", 1, "apple", 2);
  enqueue(queue(), "a", 2);
  auto first = spawn_consumer(consumer_config(
      "c-1", {}, crash_at(actors::crash_point::consumer_after_effect)));
  auto exit = watch(first);
  run();
  ASSERT_TRUE(exit->exited);
  EXPECT_TRUE(has_code(exit->reason, actors::ec::injected_crash))
      << render(exit->reason);
  // Applied, then died before the remove: the effect is in, the entry too.
  EXPECT_EQ(broker_->consumed, 1);
  EXPECT_EQ(broker_->reserved["apple"], 2);
  EXPECT_EQ(ids_in(processing("c-1")), std::vector<std::string>{"a#1"});
  EXPECT_EQ(ids_in(queue()), std::vector<std::string>{"a#2"});

  test::fake_consume_port port{broker_};
  ASSERT_EQ(port.recover(processing("c-1"), queue()), 1u);
  EXPECT_EQ(ids_in(queue()).front(), "a#1") << "back at the head";

  spawn_consumer(consumer_config("c-2"));
  run();
  // Processed once, the duplicate absorbed, the effect not doubled.
  EXPECT_EQ(broker_->processed.size(), 2u);
  EXPECT_EQ(broker_->consumed, 2);
  EXPECT_EQ(broker_->duplicates, 1);
  EXPECT_EQ(metrics_->duplicates_absorbed.load(), 1);
  EXPECT_EQ(metrics_->applied.load(), 2);
  EXPECT_EQ(broker_->reserved["apple"], 2);
  EXPECT_EQ(broker_->order_violations, 0);
  EXPECT_TRUE(list(queue()).empty());
  EXPECT_TRUE(list(processing("c-2")).empty());
}

TEST_F(ActorConsumerBroker, FailedApplyBacksOffRecoversAndKeepsOrder) {
  enqueue(queue(), "a", 1, "apple", 1);
  enqueue(queue(), "a", 2);
  enqueue(queue(), "a", 3);
  broker_->fail_applies = 1;
  auto consumer = spawn_consumer(consumer_config("c-1"));
  auto exit = watch(consumer);
  run();
  EXPECT_FALSE(exit->exited) << "a Redis error is no crash";
  EXPECT_EQ(metrics_->consumer_errors.load(), 1);
  EXPECT_TRUE(broker_->processed.empty());
  EXPECT_EQ(ids_in(processing("c-1")), std::vector<std::string>{"a#1"});

  advance(49, 1); // backing off: the first retry is 50 ms later
  EXPECT_TRUE(broker_->processed.empty());
  EXPECT_EQ(ids_in(queue()), (std::vector<std::string>{"a#2", "a#3"}));

  advance(1, 1);
  EXPECT_EQ(broker_->consumed, 3);
  EXPECT_EQ(broker_->duplicates, 0);
  EXPECT_EQ(broker_->order_violations, 0);
  EXPECT_EQ(metrics_->recovered_entries.load(), 1);
  EXPECT_TRUE(list(queue()).empty());
  EXPECT_TRUE(list(processing("c-1")).empty());
  // Its own processing list was put back before anything new was popped.
  auto recover = std::find(broker_->trace.begin(), broker_->trace.end(),
                           "recover " + processing("c-1"));
  ASSERT_NE(recover, broker_->trace.end());
  EXPECT_EQ(
      std::count(broker_->trace.begin(), recover, "pop " + processing("c-1")),
      1);
}

TEST_F(ActorConsumerBroker, LostPopRepliesDoubleTheBackoffAndLoseNothing) {
  enqueue(queue(), "a", 1, "apple", 1);
  enqueue(queue(), "a", 2);
  broker_->fail_pops = 2;
  auto consumer = spawn_consumer(consumer_config("c-1"));
  run();
  // The pop moved a#1 but its reply was lost.
  EXPECT_EQ(ids_in(processing("c-1")), std::vector<std::string>{"a#1"});
  advance(50, 1); // recovered, popped again, lost again: now 100 ms
  EXPECT_EQ(metrics_->consumer_errors.load(), 2);
  EXPECT_EQ(ids_in(processing("c-1")), std::vector<std::string>{"a#1"});
  EXPECT_EQ(ids_in(queue()), std::vector<std::string>{"a#2"});
  advance(99, 1);
  EXPECT_TRUE(broker_->processed.empty());
  advance(1, 1);
  EXPECT_EQ(broker_->consumed, 2);
  EXPECT_EQ(broker_->order_violations, 0);
  EXPECT_EQ(broker_->duplicates, 0);
  EXPECT_EQ(metrics_->recovered_entries.load(), 2);
  EXPECT_TRUE(list(queue()).empty());
  EXPECT_TRUE(list(processing("c-1")).empty());
}

} // namespace
