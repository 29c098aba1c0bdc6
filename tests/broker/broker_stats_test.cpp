#include "broker/broker_stats.hpp"

#include "broker/connection.hpp"
#include "broker/inbox.hpp"
#include "broker/publisher.hpp"
#include "broker/reliable_queue.hpp"
#include "tests/broker/event_entries.hpp"
#include "tests/broker/redis_fixture.hpp"

#include <atomic>
#include <iostream>
#include <thread>

using namespace outbox::broker;
using outbox::test::redis_fixture;

namespace {

using BrokerStats = redis_fixture;

event_entry make_entry(const std::string& aggregate, std::int64_t seq) {
  return outbox::test::event_of(aggregate + "-" + std::to_string(seq),
                                aggregate, seq, "OrderPlaced",
                                R"({"sku":"S","qty":1})");
}

} // namespace

TEST_F(BrokerStats, EmptyRedis) {
  keys names;
  names.partitions = 2;
  auto stats = read_stats(conn(), names);
  EXPECT_EQ(stats.queues.size(), 2u);
  EXPECT_EQ(stats.queued_total(), 0);
  EXPECT_TRUE(stats.processing.empty());
  EXPECT_EQ(stats.processed, 0);
  EXPECT_EQ(stats.dead_letter, 0);
  EXPECT_TRUE(stats.counters.empty());
}

TEST_F(BrokerStats, ReadsQueuesProcessingAndCounters) {
  keys names;
  names.partitions = 3;
  publisher pub{conn(), names};
  std::vector<event_entry> batch;
  for (int i = 0; i < 10; ++i)
    batch.push_back(make_entry("order-" + std::to_string(i), 1));
  pub.publish(batch);
  reliable_queue queue{conn()};
  // Status counts the processing lists of configured queues only.
  auto processing = names.processing_for(names.partition(0), "c1");
  auto first = queue.pop(names.partition(0), processing, 0);
  auto second = queue.pop(names.partition(1), processing, 0);
  ASSERT_TRUE(first && second);
  inbox box{conn(), names};
  box.apply(*first);
  box.apply(*first);
  box.apply("garbage");
  // An emptied processing list does not show up.
  auto idle = names.processing_for(names.partition(1), "c2");
  conn().command({"RPUSH", idle, "x"});
  conn().command({"LPOP", idle});

  auto stats = read_stats(conn(), names);
  ASSERT_EQ(stats.queues.size(), 3u);
  EXPECT_EQ(stats.queued_total(), 8);
  EXPECT_EQ(stats.processing.size(), 1u);
  EXPECT_EQ(stats.processing[processing], 2);
  EXPECT_EQ(stats.processing_total(), 2);
  EXPECT_EQ(stats.processed, 1);
  EXPECT_EQ(stats.dead_letter, 1);
  EXPECT_EQ(stats.counters["consumed"], 1);
  EXPECT_EQ(stats.counters["duplicates"], 1);
  EXPECT_EQ(stats.counters["dead_lettered"], 1);
}

// A consumer pops into a processing list its scan may not have seen yet
// (a new consumer's, or one that emptied): the queues are read before the
// scan, so an entry is counted in one place or the other, never in none
// (in both, when it moves between: a read over-counts rather than miss).
TEST_F(BrokerStats, AnEntryPoppedDuringTheReadIsStillCounted) {
  keys names;
  const int entries = 300;
  for (int i = 0; i < entries; ++i)
    conn().command({"RPUSH", names.partition(0), "e" + std::to_string(i)});
  std::atomic<bool> popped_all{false};
  std::thread consumers{[&] {
    connection own{server_->connection_options()};
    reliable_queue queue{own};
    // Each pop into a list of its own: a consumer restarted every entry.
    for (int i = 0; i < entries; ++i)
      queue.pop(
          names.partition(0),
          names.processing_for(names.partition(0), "c" + std::to_string(i)), 0);
    popped_all = true;
  }};
  int reads = 0;
  do {
    auto stats = read_stats(conn(), names);
    ++reads;
    EXPECT_TRUE(stats.settled);
    EXPECT_GE(stats.queued_total() + stats.processing_total(), entries)
        << "read " << reads;
  } while (!popped_all && !HasFailure());
  consumers.join();
  EXPECT_GE(reads, 1);
}

// Recovery moves entries back to their queue, where a consumer may pop one
// again into a list the scan missed: it counts in `recovered`, and a read
// it ran across says it is not settled instead of counting nothing.
TEST_F(BrokerStats, ARecoveryDuringTheReadIsNotSettled) {
  keys names;
  conn().command({"RPUSH", names.partition(0), "e"});
  std::atomic<bool> done{false};
  std::thread consumers{[&] {
    connection own{server_->connection_options()};
    reliable_queue queue{own};
    for (int i = 0; !done; ++i) {
      auto processing =
          names.processing_for(names.partition(0), "c" + std::to_string(i));
      queue.pop(names.partition(0), processing, 0);
      queue.recover(processing, names.partition(0), names.counters);
    }
  }};
  int settled = 0;
  int unsettled = 0;
  for (int i = 0; i < 300 && !HasFailure(); ++i) {
    auto stats = read_stats(conn(), names);
    if (!stats.settled) {
      ++unsettled;
      continue;
    }
    ++settled;
    EXPECT_GE(stats.queued_total() + stats.processing_total(), 1)
        << "read " << i;
  }
  done = true;
  consumers.join();
  EXPECT_GT(unsettled, 0) << "no read ran across a recovery";
  EXPECT_GT(hash_integer(names.counters, "recovered"), 0);
  std::cout << "settled reads " << settled << ", unsettled " << unsettled
            << "\n";
}
