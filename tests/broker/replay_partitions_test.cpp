#include "broker/replay_partitions.hpp"

#include "broker/keys.hpp"

#include "tests/broker/redis_fixture.hpp"

// The partition count a dead-letter replay checks against the one the
// running processes recorded, on a private Redis.

namespace outbox::test {
namespace {

using BrokerReplayPartitions = redis_fixture;

/// Names with `count` partitions, the rest the defaults.
broker::keys partitions(std::size_t count) {
  broker::keys names;
  names.partitions = count;
  return names;
}

TEST_F(BrokerReplayPartitions, NothingRecordedAgreesAndRecordsNothing) {
  auto names = partitions(4);
  auto agreement = broker::partitions_for_replay(conn(), names);
  EXPECT_EQ(agreement.ours, 4u);
  EXPECT_FALSE(agreement.recorded.has_value());
  EXPECT_TRUE(agreement.agreed());
  EXPECT_FALSE(broker::recorded_partitions(conn(), names).has_value())
      << "a replay leaves the count to the processes";
}

TEST_F(BrokerReplayPartitions, OnlyAnotherRecordedCountDisagrees) {
  broker::record_partitions(conn(), partitions(4));
  EXPECT_TRUE(broker::partitions_for_replay(conn(), partitions(4)).agreed());
  auto other = broker::partitions_for_replay(conn(), partitions(2));
  EXPECT_EQ(other.ours, 2u);
  EXPECT_EQ(other.recorded, 4u);
  EXPECT_FALSE(other.agreed());
}

TEST_F(BrokerReplayPartitions, ZeroPartitionsIsOneList) {
  broker::record_partitions(conn(), partitions(1));
  auto zero = broker::partitions_for_replay(conn(), partitions(0));
  EXPECT_EQ(zero.ours, 1u);
  EXPECT_TRUE(zero.agreed());
}

} // namespace
} // namespace outbox::test
