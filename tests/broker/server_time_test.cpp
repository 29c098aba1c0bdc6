#include "broker/server_time.hpp"

#include "broker/broker_error.hpp"
#include "storage/clock.hpp"
#include "tests/broker/redis_fixture.hpp"

using namespace outbox::broker;
using outbox::storage::wall_clock_now;
using outbox::test::redis_fixture;

namespace {

class BrokerServerTime : public redis_fixture {};

} // namespace

TEST_F(BrokerServerTime, ReadsRedisClockInMilliseconds) {
  // The private Redis runs on this host: its clock is this one's.
  auto before = wall_clock_now();
  auto now = server_time_ms(conn());
  auto after = wall_clock_now();
  EXPECT_GE(now, before - 1000);
  EXPECT_LE(now, after + 1000);
}

TEST_F(BrokerServerTime, ReadsATimeReplyOfAPipeline) {
  auto replies = conn().pipeline({{"TIME"}, {"PING"}});
  EXPECT_GE(time_ms(replies[0]), wall_clock_now() - 5000);
  EXPECT_THROW(time_ms(replies[1]), broker_error);
}

TEST_F(BrokerServerTime, APairOfFieldsThatAreNotNumbersIsRefused) {
  // Any two-element array will do as a stand-in for what a proxy might
  // answer: numbers are read, anything else is refused, never read as 0.
  conn().command({"RPUSH", "digits", "5", "7000"});
  EXPECT_EQ(time_ms(conn().command({"LRANGE", "digits", "0", "-1"})), 5007);
  conn().command({"RPUSH", "words", "soon", "later"});
  EXPECT_THROW(time_ms(conn().command({"LRANGE", "words", "0", "-1"})),
               broker_error);
  conn().command({"RPUSH", "half", "5", "7x"});
  EXPECT_THROW(time_ms(conn().command({"LRANGE", "half", "0", "-1"})),
               broker_error);
}
