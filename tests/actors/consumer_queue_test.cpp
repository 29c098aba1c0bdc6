#include "actors/consumer.hpp"

#include "tests/actors/consumer_fixture.hpp"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

// The consumer on the fake reliable queue when all goes well: pop ->
// dedup+effect -> remove in batches, bounded by count and bytes, taken
// round-robin over several owned queues.

using namespace outbox;

namespace {

using ActorConsumerQueue = test::consumer_fixture;

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

} // namespace
