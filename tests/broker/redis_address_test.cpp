#include "broker/redis_address.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

using namespace outbox::broker;

namespace {

/// The reason `text` is refused; fails the test when it is accepted.
std::string refusal(const std::string& text) {
  try {
    parse_redis_address(text);
  } catch (const address_error& e) {
    return e.what();
  }
  ADD_FAILURE() << text << " was accepted";
  return {};
}

} // namespace

TEST(BrokerRedisAddress, HostAndPortGiveNoCredentials) {
  auto a = parse_redis_address("127.0.0.1:6390");
  EXPECT_EQ(a.where.to_string(), "127.0.0.1:6390");
  EXPECT_FALSE(a.username);
  EXPECT_FALSE(a.password);
  EXPECT_FALSE(a.db);
}

TEST(BrokerRedisAddress, UriGivesUserPasswordAndDatabase) {
  auto a = parse_redis_address("redis://app:s3cret@redis.local:6390/3");
  EXPECT_EQ(a.where.host, "redis.local");
  EXPECT_EQ(a.where.port, 6390);
  EXPECT_EQ(a.username.value_or(""), "app");
  EXPECT_EQ(a.password.value_or(""), "s3cret");
  EXPECT_EQ(a.db.value_or(-1), 3);
}

TEST(BrokerRedisAddress, UriPartsLeftOutStayUnset) {
  auto plain = parse_redis_address("redis://10.0.0.5");
  EXPECT_EQ(plain.where.to_string(), "10.0.0.5:6379"); // Redis's usual port
  EXPECT_FALSE(plain.username);
  EXPECT_FALSE(plain.password);
  EXPECT_FALSE(plain.db);
  // A password alone, as redis-cli reads it; an empty user is no user.
  auto alone = parse_redis_address("redis://s3cret@h:1");
  EXPECT_FALSE(alone.username);
  EXPECT_EQ(alone.password.value_or(""), "s3cret");
  auto no_user = parse_redis_address("redis://:s3cret@h:1/");
  EXPECT_FALSE(no_user.username);
  EXPECT_EQ(no_user.password.value_or(""), "s3cret");
  EXPECT_FALSE(no_user.db);
  // A user whose password comes from elsewhere (the environment, a file).
  auto user_only = parse_redis_address("redis://app:@h:1/0");
  EXPECT_EQ(user_only.username.value_or(""), "app");
  EXPECT_FALSE(user_only.password);
  EXPECT_EQ(user_only.db.value_or(-1), 0);
}

TEST(BrokerRedisAddress, PasswordsArePercentDecodedAndMayHoldAnAt) {
  auto encoded = parse_redis_address("REDIS://app:p%40ss%3Aw%2Fd@h:1");
  EXPECT_EQ(encoded.password.value_or(""), "p@ss:w/d");
  auto raw_at = parse_redis_address("redis://app:p@ss@h:1/2");
  EXPECT_EQ(raw_at.password.value_or(""), "p@ss");
  EXPECT_EQ(raw_at.where.to_string(), "h:1");
  EXPECT_EQ(raw_at.db.value_or(-1), 2);
  auto v6 = parse_redis_address("redis://[::1]:6390");
  EXPECT_EQ(v6.where.host, "::1");
  EXPECT_EQ(v6.where.port, 6390);
}

TEST(BrokerRedisAddress, MalformedAddressesAreRefusedWithoutQuotingThem) {
  for (const std::string text :
       {"redis://app:s3cret@h:1/x", "redis://app:s3cret@h:0",
        "redis://app:s3cret@", "redis://app:s3%zcret@h:1",
        "redis://app:s3cret@h:1/3?ssl=true", "http://app:s3cret@h:1",
        "app:s3cret@h:1", "redis://app:s3cret@h:1/-1"}) {
    auto why = refusal(text);
    EXPECT_FALSE(why.empty()) << text;
    EXPECT_THAT(why, testing::Not(testing::HasSubstr("s3cret")));
  }
}

TEST(BrokerRedisAddress, TlsIsRefusedNamingWhatToUseInstead) {
  EXPECT_TRUE(asks_for_tls("rediss://h:1"));
  EXPECT_TRUE(asks_for_tls("REDISS://h:1"));
  EXPECT_FALSE(asks_for_tls("redis://h:1"));
  auto why = refusal("rediss://app:s3cret@h:6380/1");
  EXPECT_THAT(why, testing::HasSubstr("rediss:// (TLS) is not supported"));
  EXPECT_THAT(why, testing::HasSubstr("stunnel"));
  EXPECT_THAT(why, testing::HasSubstr("redis://"));
  EXPECT_THAT(why, testing::Not(testing::HasSubstr("s3cret")));
}

TEST(BrokerRedisAddress, SentinelUriNamesTheSentinelsAndTheMaster) {
  auto a = parse_redis_address(
      "redis-sentinel://app:s3cret@10.0.0.1,10.0.0.2:26380,[::1]/2#orders");
  ASSERT_TRUE(a.sentinel.has_value());
  EXPECT_EQ(a.sentinel->master_name, "orders");
  ASSERT_EQ(a.sentinel->sentinels.size(), 3u);
  EXPECT_EQ(a.sentinel->sentinels[0].host, "10.0.0.1");
  EXPECT_EQ(a.sentinel->sentinels[0].port, default_sentinel_port);
  EXPECT_EQ(a.sentinel->sentinels[1].port, 26380);
  EXPECT_EQ(a.sentinel->sentinels[2].host, "::1");
  // The user information and the database are the master's.
  EXPECT_EQ(a.username, "app");
  EXPECT_EQ(a.password, "s3cret");
  EXPECT_EQ(a.db, 2);
  EXPECT_TRUE(a.sentinel->username.empty());
  EXPECT_TRUE(a.sentinel->password.empty());
  EXPECT_FALSE(parse_redis_address("redis://h:1").sentinel.has_value());
  EXPECT_TRUE(parse_redis_address("REDIS-SENTINEL://h#m").sentinel.has_value());
}

TEST(BrokerRedisAddress, SentinelUriWithoutAMasterOrWithBadHostsIsRefused) {
  EXPECT_THAT(refusal("redis-sentinel://app:s3cret@h:26379"),
              testing::HasSubstr("#MASTER_NAME"));
  EXPECT_THAT(refusal("redis-sentinel://h:26379#"),
              testing::HasSubstr("#MASTER_NAME"));
  EXPECT_THAT(refusal("redis-sentinel://h#my master"),
              testing::HasSubstr("letters, digits"));
  for (const std::string text :
       {"redis-sentinel://app:s3cret@h:0#m", "redis-sentinel://app:s3cret@h,#m",
        "redis-sentinel://app:s3cret@,h#m",
        "redis-sentinel://app:s3cret@h?x=1#m"}) {
    auto why = refusal(text);
    EXPECT_FALSE(why.empty()) << text;
    EXPECT_THAT(why, testing::Not(testing::HasSubstr("s3cret"))) << text;
  }
  EXPECT_THAT(refusal("sentinel://h#m"),
              testing::HasSubstr("redis-sentinel://"));
}
