#include "metrics/refusal_log.hpp"

#include "broker/command_refusal.hpp"

#include <gtest/gtest.h>

namespace outbox::test {
namespace {

constexpr const char* refused_rpush =
    "NOPERM this user has no permissions to run the 'rpush' command";

TEST(MetricsRefusalLog, ARefusalStandsOnlyOnceItCameBackForTheHorizon) {
  metrics::refusal_log log;
  log.set_horizon(2000);
  log.note("127.0.0.1:6390", refused_rpush, 1000);
  EXPECT_FALSE(log.standing(1000));
  EXPECT_TRUE(log.latest(1000));
  log.note("127.0.0.1:6390", refused_rpush, 2500);
  EXPECT_FALSE(log.standing(2500)) << "met for 1.5 s of a 2 s horizon";
  log.note("127.0.0.1:6390", refused_rpush, 3000);
  auto standing = log.standing(3000);
  ASSERT_TRUE(standing);
  EXPECT_EQ(standing->words, refused_rpush);
  EXPECT_EQ(standing->where, "127.0.0.1:6390");
  EXPECT_EQ(standing->first, 1000);
  EXPECT_EQ(standing->times, 3);
  // Not met again within the horizon: over.
  EXPECT_FALSE(log.standing(5001));
  EXPECT_FALSE(log.latest(5001));
}

TEST(MetricsRefusalLog, ItIsAnnouncedOncePerStretch) {
  metrics::refusal_log log;
  log.set_horizon(1000);
  log.note("h:1", refused_rpush, 0);
  log.note("h:1", refused_rpush, 1000);
  EXPECT_TRUE(log.standing_unannounced(1000));
  log.note("h:1", refused_rpush, 1500);
  EXPECT_FALSE(log.standing_unannounced(1500)) << "said twice";
  // Fixed, then broken again: a new stretch, said again once it stands.
  log.note("h:1", refused_rpush, 9000);
  EXPECT_FALSE(log.standing_unannounced(9000));
  log.note("h:1", refused_rpush, 10'000);
  auto again = log.standing_unannounced(10'000);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->first, 9000);
}

TEST(MetricsRefusalLog, StaysSmallWhateverItIsFed) {
  metrics::refusal_log log;
  for (int i = 0; i < 1000; ++i)
    log.note("h:1", "NOPERM key " + std::to_string(i), i);
  auto latest = log.latest(1000);
  ASSERT_TRUE(latest);
  EXPECT_EQ(latest->words, "NOPERM key 999");
}

TEST(BrokerCommandRefusal, NamesTheRefusalsOfTheCommandNotOfTheServerOrEntry) {
  EXPECT_TRUE(broker::refuses_the_command(refused_rpush));
  EXPECT_TRUE(broker::refuses_the_command(
      "ERR unknown command 'EVALSHA', with args beginning with: "));
  EXPECT_TRUE(broker::refuses_the_command(
      "ERR The user executing the script can't run this command or "
      "subcommand script: e98499c8, on @user_script:1."));
  EXPECT_FALSE(broker::refuses_the_command(
      "READONLY You can't write against a read only replica."));
  EXPECT_FALSE(broker::refuses_the_command(
      "WRONGTYPE Operation against a key holding the wrong kind of value"));
  EXPECT_FALSE(broker::refuses_the_command("ERR value is not an integer"));
}

} // namespace
} // namespace outbox::test
