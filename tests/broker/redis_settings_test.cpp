#include "broker/redis_settings.hpp"

#include "broker/connection.hpp"
#include "support/redis_server.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

// What read_redis_settings finds in real redis-servers started with the
// settings under test: eviction, persistence, and CONFIG renamed away.

namespace outbox::test {
namespace {

broker::redis_settings settings_of(const redis_server::options& options) {
  redis_server server{options};
  broker::connection conn{server.connection_options()};
  return broker::read_redis_settings(conn);
}

TEST(BrokerRedisSettings, TheTestServersDefaultsKeepNothingButEvictNothing) {
  // The private servers run with --save "" and --appendonly no.
  auto seen = settings_of({});
  EXPECT_EQ(seen.maxmemory_policy, "noeviction");
  EXPECT_EQ(seen.appendonly, "no");
  EXPECT_EQ(seen.save, "");
  EXPECT_TRUE(seen.appendfsync.has_value());
  EXPECT_EQ(seen.role, "master");
  EXPECT_TRUE(seen.config_error.empty()) << seen.config_error;
  EXPECT_FALSE(seen.may_evict());
  EXPECT_TRUE(seen.persists_nothing());
}

TEST(BrokerRedisSettings, AnEvictingPolicyIsSeen) {
  for (const char* policy : {"allkeys-lru", "volatile-ttl"}) {
    SCOPED_TRACE(policy);
    auto seen = settings_of({false, {"--maxmemory-policy", policy}});
    EXPECT_EQ(seen.maxmemory_policy, policy);
    EXPECT_TRUE(seen.may_evict());
  }
}

TEST(BrokerRedisSettings, AofOrRdbSnapshotsArePersistence) {
  auto aof = settings_of({true});
  EXPECT_EQ(aof.appendonly, "yes");
  EXPECT_EQ(aof.appendfsync, "always");
  EXPECT_FALSE(aof.persists_nothing());
  auto rdb = settings_of({false, {"--save", "3600 1"}});
  EXPECT_EQ(rdb.appendonly, "no");
  EXPECT_EQ(rdb.save, "3600 1");
  EXPECT_FALSE(rdb.persists_nothing());
}

TEST(BrokerRedisSettings, RenamedConfigLeavesTheSettingsUnknown) {
  auto seen = settings_of({false, {"--rename-command", "CONFIG", ""}});
  EXPECT_THAT(seen.config_error, testing::HasSubstr("CONFIG"));
  EXPECT_FALSE(seen.maxmemory_policy.has_value());
  EXPECT_FALSE(seen.appendonly.has_value());
  EXPECT_FALSE(seen.save.has_value());
  // Unknown is neither judged evicting nor unpersisted.
  EXPECT_FALSE(seen.may_evict());
  EXPECT_FALSE(seen.persists_nothing());
  EXPECT_EQ(seen.role, "master") << "ROLE still answers";
}

} // namespace
} // namespace outbox::test
