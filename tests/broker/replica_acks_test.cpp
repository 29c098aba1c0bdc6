// redis.min_replica_acks: a relay's push counts only once a replica has it
// (broker/publisher.hpp), with a real master and replica.

#include "broker/broker_error.hpp"
#include "broker/publisher.hpp"
#include "tests/broker/event_entries.hpp"

#include "support/redis_server.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <hiredis/hiredis.h>

#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <vector>

using namespace outbox;
using outbox::test::redis_server;

namespace {

broker::event_entry entry(std::int64_t seq) {
  return outbox::test::event_of("acked-" + std::to_string(seq), "order-1", seq,
                                "OrderPlaced", R"({"sku":"A","qty":1})");
}

/// Polls until the replica at `replica` reports its link to the master up
/// (at most 10 s): replication starts on the replica's own schedule.
bool linked(const redis_server& replica) {
  broker::connection conn{replica.connection_options()};
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds{10};
  while (std::chrono::steady_clock::now() < until) {
    auto info = conn.command({"INFO", "replication"});
    if (broker::reply_text(*info).find("master_link_status:up") !=
        std::string::npos)
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds{50});
  }
  return false;
}

redis_server::options replica_of(const redis_server& master) {
  auto at = master.endpoint();
  redis_server::options options;
  options.extra_args = {"--replicaof", at.host, std::to_string(at.port)};
  return options;
}

/// A master and one replica of it, linked before the test starts.
class BrokerReplicaAcks : public ::testing::Test {
protected:
  void SetUp() override { ASSERT_TRUE(linked(replica_)); }

  redis_server master_;
  redis_server replica_{replica_of(master_)};
};

} // namespace

TEST_F(BrokerReplicaAcks, APushCountsOnlyOnceAReplicaHasIt) {
  auto& master = master_;
  auto& replica = replica_;

  broker::keys names;
  names.partitions = 1;
  auto options = master.connection_options();
  options.min_replica_acks = 1;
  options.replica_ack_timeout_ms = 300;
  broker::connection conn{options};
  broker::publisher publisher{conn, names};
  publisher.publish({entry(1)});
  broker::connection on_replica{replica.connection_options()};
  EXPECT_EQ(on_replica.command({"LLEN", names.partition(0)})->integer, 1);

  // The replica gone: the push is not acknowledged, an outage (the relay
  // hands its rows back uncharged), though the master holds it.
  replica.kill();
  try {
    publisher.publish({entry(2)});
    FAIL() << "acknowledged without a replica";
  } catch (const broker::broker_error& e) {
    EXPECT_EQ(e.code(), broker::broker_errc::unavailable) << e.what();
    // Its own state: announced once per master as what the relays wait for.
    EXPECT_EQ(e.state(), broker::server_state::replicas_behind);
    EXPECT_THAT(e.what(), testing::HasSubstr("0 of the 1 replicas "
                                             "redis.min_replica_acks asks"));
  }
  EXPECT_EQ(conn.command({"LLEN", names.partition(0)})->integer, 2);

  // Back: acknowledged again; what the master had is copied to it.
  replica.start();
  ASSERT_TRUE(linked(replica));
  publisher.publish({entry(2)});
  broker::connection again{replica.connection_options()};
  EXPECT_EQ(again.command({"LLEN", names.partition(0)})->integer, 3);

  // 0, the default, takes the master's word alone.
  replica.kill();
  auto plain_options = master.connection_options();
  broker::connection plain{plain_options};
  broker::publisher unreplicated{plain, names};
  EXPECT_NO_THROW(unreplicated.publish({entry(3)}));
}

/// Entries of several aggregates go to several lists in one script call:
/// WAIT covers them all, refused or acknowledged as one push.
TEST_F(BrokerReplicaAcks, APushToSeveralListsCountsOnlyOnceAReplicaHasIt) {
  auto& master = master_;
  auto& replica = replica_;

  broker::keys names;
  names.partitions = 8;
  std::vector<broker::event_entry> entries;
  std::set<std::string> lists;
  for (int order = 1; order <= 16; ++order) {
    auto aggregate = "order-" + std::to_string(order);
    entries.push_back(outbox::test::event_of("several-" + std::to_string(order),
                                             aggregate, 1, "OrderPlaced",
                                             R"({"sku":"A","qty":1})"));
    lists.insert(names.queue_for(aggregate));
  }
  ASSERT_GT(lists.size(), 1u) << "every aggregate on one list";
  auto queued = [&](const redis_server& server) {
    broker::connection conn{server.connection_options()};
    long long total = 0;
    for (const auto& list : lists)
      total += conn.command({"LLEN", list})->integer;
    return total;
  };

  auto options = master.connection_options();
  options.min_replica_acks = 1;
  options.replica_ack_timeout_ms = 300;
  broker::connection conn{options};
  broker::publisher publisher{conn, names};
  publisher.publish(entries);
  EXPECT_EQ(queued(replica), 16);

  replica.kill();
  try {
    publisher.publish(entries);
    FAIL() << "acknowledged without a replica";
  } catch (const broker::broker_error& e) {
    EXPECT_EQ(e.code(), broker::broker_errc::unavailable) << e.what();
    EXPECT_EQ(e.state(), broker::server_state::replicas_behind);
  }
  EXPECT_EQ(queued(master), 32) << "the master took the push unconfirmed";
}
