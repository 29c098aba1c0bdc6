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

TEST_F(ActorConsumerQueue, IdleWithSeveralQueuesWaitsOnTheirDoorbells) {
  auto setup = consumer_config("c-1", {"q.0", "q.1"});
  spawn_consumer(std::move(setup));
  run();
  // Nothing queued: it waits on both doorbells, never a blocking pop on one.
  auto waits = std::count(broker_->trace.begin(), broker_->trace.end(),
                          std::string{"wait doorbells"});
  EXPECT_GE(waits, 1);
  // An entry on the second queue is taken on the next look.
  enqueue("q.1", "a", 1);
  advance(1, 1);
  EXPECT_EQ(broker_->consumed, 1);
  EXPECT_TRUE(list("q.1").empty());
}

TEST_F(ActorConsumerQueue, TakesBatchesRoundRobinSoNoQueueStarves) {
  for (std::int64_t seq = 1; seq <= 5; ++seq)
    enqueue("q.0", "a", seq);
  for (std::int64_t seq = 1; seq <= 3; ++seq)
    enqueue("q.1", "b", seq);
  auto setup = consumer_config("c-1", {"q.0", "q.1"});
  setup.burst = 2;
  spawn_consumer(std::move(setup));
  run();
  // One apply call per batch of at most two, alternating between queues,
  // each batch removed before the next is popped; then an idle wait.
  auto p0 = "pop " + processing("c-1", "q.0");
  auto p1 = "pop " + processing("c-1", "q.1");
  auto r0 = "remove " + processing("c-1", "q.0");
  auto r1 = "remove " + processing("c-1", "q.1");
  EXPECT_EQ(broker_->trace, (std::vector<std::string>{p0, p0, "apply 2", r0, //
                                                      p1, p1, "apply 2", r1, //
                                                      p0, p0, "apply 2", r0, //
                                                      p1, "apply 1", r1,     //
                                                      p0, "apply 1", r0,     //
                                                      "wait doorbells"}));
  EXPECT_EQ(broker_->consumed, 8);
  EXPECT_EQ(broker_->order_violations, 0);
  EXPECT_EQ(metrics_->applied.load(), 8);
}

TEST_F(ActorConsumerQueue, CapsABatchByBytes) {
  for (std::int64_t seq = 1; seq <= 3; ++seq)
    enqueue(queue(), "a", seq);
  auto setup = consumer_config("c-1");
  // Room for two entries, not three.
  setup.batch_bytes = list(queue())[0].size() + list(queue())[1].size() + 1;
  spawn_consumer(std::move(setup));
  run();
  EXPECT_EQ(std::count(broker_->trace.begin(), broker_->trace.end(), "apply 2"),
            1);
  EXPECT_EQ(std::count(broker_->trace.begin(), broker_->trace.end(), "apply 1"),
            1);
  EXPECT_EQ(broker_->consumed, 3);
  EXPECT_EQ(broker_->order_violations, 0);
}

TEST_F(ActorConsumerQueue, MeasuresLatencyFromTheCommittedAtTheInboxReturns) {
  enqueue(queue(), "a", 1);
  enqueue(queue(), "a", 2);
  *clock_ms_ += 40;
  enqueue(queue(), "a", 3);
  spawn_consumer(consumer_config("c-1"));
  run();
  auto latency = metrics_->commit_to_processed.summary();
  EXPECT_EQ(latency.samples, 3);
  EXPECT_EQ(latency.p99, 40);
  EXPECT_EQ(latency.p50, 40);
}

TEST_F(ActorConsumerQueue, CountsDuplicatesAndDeadLettersWithinABatch) {
  enqueue(queue(), "a", 1);
  list(queue()).push_back("not json");
  list(queue()).push_back(list(queue()).front());
  enqueue(queue(), "a", 2);
  spawn_consumer(consumer_config("c-1"));
  run();
  EXPECT_EQ(std::count(broker_->trace.begin(), broker_->trace.end(), "apply 4"),
            1);
  EXPECT_EQ(metrics_->applied.load(), 2);
  EXPECT_EQ(metrics_->duplicates_absorbed.load(), 1);
  EXPECT_EQ(metrics_->dead_lettered.load(), 1);
  EXPECT_EQ(broker_->dead_letter,
            std::vector<std::string>{"entry is not valid JSON"});
  EXPECT_EQ(broker_->order_violations, 0);
  EXPECT_TRUE(list(processing("c-1")).empty());
}

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
