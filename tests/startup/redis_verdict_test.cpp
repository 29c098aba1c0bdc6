// What the start-up checks make of a Redis's settings (startup/
// redis_preflight.hpp's judge_redis), asserted on the verdict itself: no
// server, no output. CliRedisSettings checks the same through the binary.

#include "startup/redis_preflight.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace outbox::test {
namespace {

using startup::outcome;
using testing::ElementsAre;
using testing::HasSubstr;
using testing::StartsWith;

/// A Redis that keeps everything: noeviction, AOF on, a master alone.
broker::redis_settings safe_redis() {
  broker::redis_settings seen;
  seen.maxmemory_policy = "noeviction";
  seen.appendonly = "yes";
  seen.appendfsync = "everysec";
  seen.save = "";
  seen.role = "master";
  seen.replicas = 0;
  return seen;
}

TEST(StartupRedisVerdict, ARedisThatKeepsEverythingLetsTheStartGoSilently) {
  auto judged = startup::judge_redis(safe_redis(), false);
  EXPECT_EQ(judged.result, outcome::go);
  EXPECT_FALSE(judged.refused());
  EXPECT_TRUE(judged.refusal.empty());
  EXPECT_TRUE(judged.remarks.empty());
}

TEST(StartupRedisVerdict, AnEvictingPolicyIsRefusedAsAFailureNamingTheFix) {
  auto seen = safe_redis();
  seen.maxmemory_policy = "allkeys-lru";
  auto judged = startup::judge_redis(seen, false);
  EXPECT_EQ(judged.result, outcome::refused_failure);
  EXPECT_THAT(judged.refusal,
              StartsWith("refusing to start: Redis maxmemory-policy is "
                         "allkeys-lru: once Redis reaches maxmemory"));
  EXPECT_THAT(judged.refusal,
              HasSubstr("CONFIG SET maxmemory-policy noeviction"));
  EXPECT_THAT(judged.refusal, HasSubstr("--allow-evicting-redis"));
  EXPECT_TRUE(judged.warnings().empty());
}

TEST(StartupRedisVerdict, AnAcceptedEvictingPolicyIsAWarningAndTheStartGoes) {
  auto seen = safe_redis();
  seen.maxmemory_policy = "volatile-ttl";
  auto judged = startup::judge_redis(seen, true);
  EXPECT_EQ(judged.result, outcome::go);
  ASSERT_EQ(judged.warnings().size(), 1u);
  EXPECT_THAT(judged.warnings()[0],
              HasSubstr("volatile-* evicts only keys with a ttl"));
  EXPECT_THAT(judged.warnings()[0],
              HasSubstr("; starting anyway (--allow-evicting-redis)"));
}

TEST(StartupRedisVerdict, UnreadableSettingsAndNoPersistenceAreWarnedInOrder) {
  broker::redis_settings unread;
  unread.config_error = "ERR unknown command 'CONFIG'";
  auto judged = startup::judge_redis(unread, false);
  EXPECT_EQ(judged.result, outcome::go);
  EXPECT_THAT(judged.warnings(),
              ElementsAre(HasSubstr("cannot read Redis's settings (CONFIG "
                                    "GET: ERR unknown command 'CONFIG')")));

  auto bare = safe_redis();
  bare.appendonly = "no";
  bare.maxmemory_policy = "allkeys-random";
  judged = startup::judge_redis(bare, true);
  EXPECT_THAT(judged.warnings(),
              ElementsAre(HasSubstr("allkeys-random"),
                          StartsWith("Redis has no persistence")));
}

TEST(StartupRedisVerdict, ReplicasAreWarnedOfOnlyToAProcessWithRelays) {
  auto seen = safe_redis();
  seen.replicas = 2;
  EXPECT_THAT(startup::judge_redis(seen, false, 0).warnings(),
              ElementsAre(StartsWith("Redis has 2 replicas and "
                                     "redis.min_replica_acks is 0")));
  EXPECT_TRUE(startup::judge_redis(seen, false, 2).remarks.empty());
  EXPECT_THAT(startup::judge_redis(seen, false, 3).warnings(),
              ElementsAre("redis.min_replica_acks is 3 but Redis has 2 "
                          "replicas connected: the relays wait until that "
                          "many are"));
  // No relays (-1): nothing is pushed, nothing to warn of.
  EXPECT_TRUE(startup::judge_redis(seen, false, -1).remarks.empty());
}

TEST(StartupVerdict, RemarksKeepTheirOrderAndARefusalItsKind) {
  startup::verdict judged;
  judged.inform("one");
  judged.warn("two");
  judged.debug("three");
  judged.warn("four");
  EXPECT_THAT(judged.warnings(), ElementsAre("two", "four"));
  ASSERT_EQ(judged.remarks.size(), 4u);
  EXPECT_EQ(judged.remarks[0].said_as, startup::remark::level::info);
  EXPECT_EQ(judged.remarks[2].said_as, startup::remark::level::debug);
  EXPECT_FALSE(judged.refused());
  judged.refuse(outcome::refused_usage, "no");
  EXPECT_TRUE(judged.refused());
  EXPECT_EQ(judged.result, outcome::refused_usage);
  EXPECT_EQ(judged.refusal, "no");
}

} // namespace
} // namespace outbox::test
