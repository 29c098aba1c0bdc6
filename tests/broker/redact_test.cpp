#include "broker/redact.hpp"

#include "broker/connection.hpp"
#include "config/settings.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

// One masking for every echo of a Redis address: messages, logs, status,
// reports and config::to_json never show a password.

namespace outbox::broker {
namespace {

TEST(BrokerRedactSecrets, MasksThePasswordOfUserInformation) {
  EXPECT_EQ(redact_secrets("redis://u:s3cret@127.0.0.1:6379/0"),
            "redis://u:***@127.0.0.1:6379/0");
  EXPECT_EQ(redact_secrets("rediss://default:p@ss:w0rd@h:1"),
            "rediss://default:***@h:1");
  EXPECT_EQ(redact_secrets("redis://:s3cret@h:1"), "redis://:***@h:1");
  // A password alone, as redis-cli reads it.
  EXPECT_EQ(redact_secrets("redis://s3cret@h:1"), "redis://***@h:1");
  EXPECT_EQ(redact_secrets("u:s3cret@h:1"), "u:***@h:1");
  EXPECT_EQ(redact_secrets("a@"), "***@");
  // Inside a message, quoted.
  EXPECT_EQ(redact_secrets("got 'redis://u:s3cret@h:1' here"),
            "got 'redis://u:***@h:1' here");
  // A password holding a ',' or a '/', which end an address elsewhere.
  EXPECT_EQ(redact_secrets("got 'redis-sentinel://u:p,w@h,g#bad name'"),
            "got 'redis-sentinel://u:***@h,g#bad name'");
  EXPECT_EQ(redact_secrets("redis://u:a/b@h:1/2 and more"),
            "redis://u:***@h:1/2 and more");
}

TEST(BrokerRedactSecrets, MasksPasswordParameters) {
  EXPECT_EQ(redact_secrets("redis://h:1/0?password=s3cret&db=2"),
            "redis://h:1/0?password=***&db=2");
  EXPECT_EQ(redact_secrets("h:1?PassWord=s3cret"), "h:1?PassWord=***");
  EXPECT_EQ(redact_secrets("redis://u:a@h:1?password=b"),
            "redis://u:***@h:1?password=***");
}

TEST(BrokerRedactSecrets, LeavesOtherTextAndIsIdempotent) {
  for (std::string text :
       {"127.0.0.1:6379", "redis.local:1", "::1:6379", "", "no secret here",
        "redis://h:1/0", "password=", "u:@h"}) {
    EXPECT_EQ(redact_secrets(text), text);
  }
  auto once = redact_secrets("redis://u:s3cret@h:1?password=x y@z");
  EXPECT_EQ(redact_secrets(once), once);
}

TEST(BrokerRedactSecrets, EndpointsAndHostsCarryNone) {
  endpoint where;
  where.host = "u:s3cret@h";
  EXPECT_EQ(where.to_string(), "u:***@h:6379");
  for (const auto* host : {"u:s3cret@h", "redis://h", "h?password=x", "h h"})
    EXPECT_FALSE(valid_host(host)) << host;
  for (const auto* host : {"redis-1.example.org", "fe80::1%eth0"})
    EXPECT_TRUE(valid_host(host)) << host;
  for (const auto* address :
       {"redis://u:s3cret@127.0.0.1:6379", "u:s3cret@127.0.0.1:6379"})
    EXPECT_FALSE(parse_endpoint(address)) << address;
}

TEST(BrokerRedactSecrets, ConfigToJsonShowsNoPassword) {
  config::settings s;
  s.redis.where.host = "redis://u:s3cret@h";
  auto shown = config::to_json(s);
  EXPECT_THAT(shown, testing::Not(testing::HasSubstr("s3cret")));
  EXPECT_THAT(shown, testing::HasSubstr("redis://u:***@h"));
  // Refused as a host, and the refusal does not show it either.
  try {
    config::validate(s);
    FAIL() << "a URI was accepted as redis.host";
  } catch (const config::config_error& e) {
    EXPECT_EQ(std::string{e.what()}.find("s3cret"), std::string::npos)
        << e.what();
  }
}

} // namespace
} // namespace outbox::broker
