// Following a master under Sentinel (broker/sentinel.hpp, connection.cpp)
// with a real master, replica and three sentinels.

#include "broker/broker_error.hpp"
#include "broker/connection.hpp"
#include "broker/sentinel.hpp"

#include "support/redis_server.hpp"
#include "support/sentinel_group.hpp"
#include "tests/broker/outage_message.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <hiredis/hiredis.h>

#include <string>

using namespace outbox;
using outbox::test::outage_message;
using outbox::test::sentinel_group;

namespace {

broker::endpoint nobody_listening() {
  return {"127.0.0.1", outbox::test::free_loopback_port()};
}

} // namespace

TEST(BrokerSentinel, TheMasterIsAskedOfTheFirstSentinelThatAnswers) {
  sentinel_group group;
  auto set = group.sentinels();
  auto down = nobody_listening();
  set.sentinels.insert(set.sentinels.begin(), down);
  auto master = broker::ask_sentinels(set);
  EXPECT_EQ(master.port, group.first_master().endpoint().port);
  // The one that answered leads next time; the silent one goes behind it.
  EXPECT_EQ(set.sentinels.front().port, group.sentinel(0).endpoint().port);
  EXPECT_EQ(set.sentinels.at(1).port, down.port);
}

TEST(BrokerSentinel, AnUnknownMasterNameIsNamedWithTheSentinelsAsked) {
  sentinel_group group;
  auto set = group.sentinels();
  set.master_name = "no-such-master";
  auto why = outage_message([&] { broker::ask_sentinels(set); });
  EXPECT_THAT(why, testing::HasSubstr("know no master named no-such-master"));
  for (std::size_t i = 0; i < 3; ++i)
    EXPECT_THAT(why,
                testing::HasSubstr(group.sentinel(i).endpoint().to_string()));
}

TEST(BrokerSentinel, NoSentinelAnsweringIsAnOutageNamingEach) {
  broker::sentinel_set set;
  set.master_name = "orders";
  set.sentinels = {nobody_listening(), nobody_listening()};
  set.timeout_ms = 300;
  auto why = outage_message([&] { broker::ask_sentinels(set); });
  EXPECT_THAT(why, testing::HasSubstr("no sentinel of master orders answers"));
  EXPECT_THAT(why, testing::HasSubstr("cannot reach sentinel at"));
  for (const auto& sentinel : set.sentinels)
    EXPECT_THAT(why, testing::HasSubstr(sentinel.to_string()));
  // A plain Redis is not a sentinel, and is said to be none.
  outbox::test::redis_server plain;
  set.sentinels = {plain.endpoint()};
  EXPECT_THAT(outage_message([&] { broker::ask_sentinels(set); }),
              testing::HasSubstr("is not a sentinel"));
}

TEST(BrokerSentinel, AServerTheSentinelsNameThatIsAReplicaIsNotUsed) {
  sentinel_group group;
  // A name the sentinels monitor at the replica's address, as they would
  // name the old address while a failover is under way.
  auto replica = group.first_replica().endpoint();
  broker::connection sentinel{[&] {
    broker::connection_options o;
    o.where = group.sentinel(0).endpoint();
    return o;
  }()};
  sentinel.command({"SENTINEL", "MONITOR", "stale", replica.host,
                    std::to_string(replica.port), "2"});
  auto options = group.connection_options();
  options.sentinel->master_name = "stale";
  options.sentinel->sentinels = {group.sentinel(0).endpoint()};
  broker::connection conn{options};
  auto why = outage_message([&] { conn.command({"PING"}); });
  EXPECT_THAT(why, testing::HasSubstr("answers ROLE slave"));
  EXPECT_THAT(why, testing::HasSubstr(replica.to_string()));
}

TEST(BrokerSentinel, AConnectionFollowsTheMasterThroughAFailover) {
  sentinel_group group;
  broker::connection conn{group.connection_options()};
  conn.command({"SET", "before", "1"});
  EXPECT_EQ(conn.options().where.port, group.first_master().endpoint().port);
  EXPECT_EQ(conn.master_switches(), 0);

  group.fail_over();
  // The open connection reached the old master, now a replica, which
  // closed it when it was demoted: the first write fails (an outage), and
  // the next one asks the sentinels and goes to the new master.
  auto refused = outage_message([&] { conn.command({"SET", "after", "1"}); });
  EXPECT_THAT(refused,
              testing::HasSubstr(group.first_master().endpoint().to_string()));
  conn.command({"SET", "after", "1"});
  EXPECT_EQ(conn.options().where.port, group.first_replica().endpoint().port);
  EXPECT_EQ(conn.master_switches(), 1);
  auto before = conn.command({"GET", "before"});
  EXPECT_EQ(broker::reply_text(*before), "1");
  EXPECT_EQ(outbox::test::role_of(conn.options().where), "master");
}

TEST(BrokerSentinel, AReplyThatTheServerIsNoLongerAMasterAsksAgain) {
  sentinel_group group;
  broker::connection conn{group.connection_options()};
  auto first = conn.command({"CLIENT", "ID"})->integer;
  // A master that cannot reach its replicas refuses writes (NOREPLICAS),
  // as an old master cut off from the others does: the connection is
  // dropped, so that the next command asks the sentinels again.
  broker::connection admin{group.first_master().connection_options()};
  admin.command({"CONFIG", "SET", "min-replicas-to-write", "5"});
  auto refused = outage_message([&] { conn.command({"SET", "k", "1"}); });
  EXPECT_THAT(refused, testing::HasSubstr("NOREPLICAS"));
  admin.command({"CONFIG", "SET", "min-replicas-to-write", "0"});
  conn.command({"SET", "k", "1"});
  EXPECT_NE(conn.command({"CLIENT", "ID"})->integer, first);
  // A server at a fixed address keeps its connection on such a reply.
  broker::connection fixed{group.first_master().connection_options()};
  auto fixed_id = fixed.command({"CLIENT", "ID"})->integer;
  admin.command({"CONFIG", "SET", "min-replicas-to-write", "5"});
  outage_message([&] { fixed.command({"SET", "k", "2"}); });
  EXPECT_EQ(fixed.command({"CLIENT", "ID"})->integer, fixed_id);
}

TEST(BrokerSentinel, SentinelsWithAPasswordAreAskedWithTheirOwn) {
  outbox::test::redis_server master;
  auto at = master.endpoint();
  outbox::test::redis_server::options guarded;
  guarded.sentinel = true;
  guarded.password = "s3ntinel";
  guarded.config_lines = {"requirepass s3ntinel",
                          "sentinel monitor guarded " + at.host + " " +
                              std::to_string(at.port) + " 1"};
  outbox::test::redis_server sentinel{guarded};
  broker::sentinel_set set;
  set.master_name = "guarded";
  set.sentinels = {sentinel.endpoint()};
  set.timeout_ms = 300;
  auto why = outage_message([&] { broker::ask_sentinels(set); });
  EXPECT_THAT(why, testing::HasSubstr("(NOAUTH)"));
  EXPECT_THAT(why, testing::HasSubstr("redis.sentinel_password"));
  EXPECT_THAT(why, testing::Not(testing::HasSubstr("OUTBOX_REDIS_PASSWORD")));
  set.password = "wrong";
  EXPECT_THAT(outage_message([&] { broker::ask_sentinels(set); }),
              testing::AllOf(testing::HasSubstr("wrong password"),
                             testing::Not(testing::HasSubstr("wrong\""))));
  set.password = "s3ntinel";
  EXPECT_EQ(broker::ask_sentinels(set).port, at.port);
}
