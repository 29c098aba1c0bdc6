#include "broker/broker_stats.hpp"

#include "broker/connection.hpp"
#include "broker/inbox.hpp"
#include "broker/publisher.hpp"
#include "broker/reliable_queue.hpp"
#include "event_entries.hpp"
#include "redis_fixture.hpp"

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
