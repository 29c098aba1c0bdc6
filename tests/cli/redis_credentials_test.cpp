// The redis section's credentials: optional, shown masked, and the
// password file read with care (cli/redis_credentials.hpp).

#include "cli/redis_credentials.hpp"
#include "config/settings.hpp"

#include "support/temp_dir.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <string>

using outbox::test::temp_dir;
using namespace outbox;

namespace {

/// Unsets the variables apply_redis_credentials reads, for one test.
class CliRedisCredentials : public ::testing::Test {
protected:
  void SetUp() override {
    ::unsetenv("OUTBOX_REDIS");
    ::unsetenv(cli::password_variable);
    ::unsetenv(cli::password_file_variable);
  }
  void TearDown() override { SetUp(); }

  std::string password_file(const std::string& text, mode_t mode,
                            const std::string& name = "pw") {
    auto path = dir_.file(name);
    std::ofstream{path, std::ios::trunc} << text;
    ::chmod(path.c_str(), mode);
    return path;
  }

  /// The key and message of the config_error `call` throws.
  template <class F>
  std::string refusal(F call) {
    try {
      call();
    } catch (const config::config_error& e) {
      return e.what();
    }
    ADD_FAILURE() << "accepted";
    return {};
  }

  temp_dir dir_;
};

TEST_F(CliRedisCredentials, KeysAreOptionalAndThePasswordIsShownMasked) {
  auto s = config::apply_json(
      R"({"redis": {"username": "app", "password": "s3cret", "db": 5}})",
      "test");
  EXPECT_NO_THROW(config::validate(s));
  EXPECT_EQ(s.redis.username, "app");
  EXPECT_EQ(s.redis.password, "s3cret");
  EXPECT_EQ(s.redis.db, 5);
  auto shown = config::to_json(s);
  EXPECT_THAT(shown, testing::Not(testing::HasSubstr("s3cret")));
  EXPECT_NE(shown.find(R"("password": "***")"), std::string::npos) << shown;
  // Unset stays "" (not "***"): nothing to hide.
  auto plain = config::to_json(config::settings{});
  EXPECT_NE(plain.find(R"("password": "")"), std::string::npos) << plain;
}

TEST_F(CliRedisCredentials, TheAddressGivesWhatItHasTheConfigTheRest) {
  auto s = config::apply_json(
      R"({"redis": {"username": "app", "db": 5, "password": "from-config"}})",
      "test");
  cli::apply_redis_credentials(s, "redis://h:7/2");
  EXPECT_EQ(s.redis.where.to_string(), "h:7");
  EXPECT_EQ(s.redis.username, "app"); // the URI gave none
  EXPECT_EQ(s.redis.db, 2);
  EXPECT_EQ(s.redis.password, "from-config");
  cli::apply_redis_credentials(s, "redis://ops:uri-pw@h:7");
  EXPECT_EQ(s.redis.username, "ops");
  EXPECT_EQ(s.redis.password, "uri-pw");
  EXPECT_EQ(s.redis.db, 2);
}

TEST_F(CliRedisCredentials, PasswordPrecedenceUriEnvironmentFileConfig) {
  auto base =
      config::apply_json(R"({"redis": {"password": "from-config"}})", "test");
  base.redis_password_file = password_file("from-file\n", 0600);
  auto s = base;
  cli::apply_redis_credentials(s, "");
  EXPECT_EQ(s.redis.password, "from-file"); // its newline dropped
  // A file named in the environment (a systemd credential) comes first.
  ::setenv(cli::password_file_variable,
           password_file("from-env-file", 0400, "credential").c_str(), 1);
  s = base;
  cli::apply_redis_credentials(s, "");
  EXPECT_EQ(s.redis.password, "from-env-file");
  ::setenv(cli::password_file_variable,
           password_file("shared", 0644, "shared").c_str(), 1);
  auto why = refusal([&] {
    s = base;
    cli::apply_redis_credentials(s, "");
  });
  EXPECT_THAT(why, testing::HasSubstr("OUTBOX_REDIS_PASSWORD_FILE: "));
  ::unsetenv(cli::password_file_variable);
  ::setenv(cli::password_variable, "from-env", 1);
  s = base;
  cli::apply_redis_credentials(s, "127.0.0.1:6390");
  EXPECT_EQ(s.redis.password, "from-env");
  s = base;
  cli::apply_redis_credentials(s, "redis://:from-uri@127.0.0.1:6390");
  EXPECT_EQ(s.redis.password, "from-uri");
  // OUTBOX_REDIS carries a URI the same way.
  ::setenv("OUTBOX_REDIS", "redis://app:env-uri@127.0.0.1:6390/4", 1);
  s = base;
  cli::apply_redis_credentials(s, "");
  EXPECT_EQ(s.redis.password, "env-uri");
  EXPECT_EQ(s.redis.username, "app");
  EXPECT_EQ(s.redis.db, 4);
}

TEST_F(CliRedisCredentials, APasswordFileOthersMayReadIsRefused) {
  auto shared = password_file("s3cret", 0644);
  auto why = refusal([&] { cli::read_password_file(shared); });
  EXPECT_NE(why.find("redis.password_file: " + shared +
                     " is readable or writable by other users (mode 0644)"),
            std::string::npos)
      << why;
  EXPECT_THAT(why, testing::Not(testing::HasSubstr("s3cret")));
  EXPECT_EQ(cli::read_password_file(password_file("s3cret", 0640)), "s3cret");
  auto empty =
      refusal([&] { cli::read_password_file(password_file("\n", 0600)); });
  EXPECT_THAT(empty, testing::HasSubstr("is empty"));
  auto missing = refusal([&] { cli::read_password_file(dir_.file("none")); });
  EXPECT_THAT(missing, testing::HasSubstr("cannot read"));
}

TEST_F(CliRedisCredentials, AMalformedOrTlsAddressNamesItsOrigin) {
  config::settings s;
  auto tls = refusal(
      [&] { cli::apply_redis_credentials(s, "rediss://u:s3cret@h:1"); });
  EXPECT_THAT(tls,
              testing::HasSubstr("--redis: rediss:// (TLS) is not supported"));
  EXPECT_THAT(tls, testing::HasSubstr("got 'rediss://u:***@h:1'"));
  ::setenv("OUTBOX_REDIS", "redis://u:s3cret@h:1/db", 1);
  auto env = refusal([&] { cli::apply_redis_credentials(s, ""); });
  EXPECT_THAT(env, testing::HasSubstr("OUTBOX_REDIS: "));
  EXPECT_THAT(env, testing::Not(testing::HasSubstr("s3cret")));
}

TEST_F(CliRedisCredentials, TheConfigsSentinelsAreUsedUnlessAnAddressIsGiven) {
  auto s = config::apply_json(
      R"({"redis": {"sentinels": ["10.0.0.1", "10.0.0.2:26380"],
                    "master_name": "orders", "sentinel_username": "watch",
                    "sentinel_password": "s3cret", "password": "m4ster"}})",
      "test");
  config::validate(s);
  auto configured = s;
  cli::apply_redis_credentials(configured, "");
  ASSERT_TRUE(configured.redis.sentinel.has_value());
  EXPECT_EQ(configured.redis.sentinel->master_name, "orders");
  ASSERT_EQ(configured.redis.sentinel->sentinels.size(), 2u);
  EXPECT_EQ(configured.redis.sentinel->sentinels[0].port, 26379);
  EXPECT_EQ(configured.redis.sentinel->sentinels[1].port, 26380);
  EXPECT_EQ(configured.redis.sentinel->username, "watch");
  EXPECT_EQ(configured.redis.sentinel->password, "s3cret");
  // The master's own password stays the master's.
  EXPECT_EQ(configured.redis.password, "m4ster");
  EXPECT_THAT(config::to_json(configured),
              testing::Not(testing::HasSubstr("s3cret")));

  // A fixed address given replaces them; a sentinel address replaces the
  // config's sentinels and name, and keeps who we are to them.
  auto fixed = s;
  cli::apply_redis_credentials(fixed, "127.0.0.1:6390");
  EXPECT_FALSE(fixed.redis.sentinel.has_value());
  auto given = s;
  ::setenv("OUTBOX_REDIS", "redis-sentinel://h1,h2:1#billing", 1);
  cli::apply_redis_credentials(given, "");
  ASSERT_TRUE(given.redis.sentinel.has_value());
  EXPECT_EQ(given.redis.sentinel->master_name, "billing");
  EXPECT_EQ(given.redis.sentinel->sentinels.size(), 2u);
  EXPECT_EQ(given.redis.sentinel->password, "s3cret");
}

TEST_F(CliRedisCredentials, HalfASentinelConfigIsRefusedNamingTheMissingKey) {
  auto name_only =
      config::apply_json(R"({"redis": {"master_name": "orders"}})", "test");
  EXPECT_THAT(refusal([&] { cli::apply_redis_credentials(name_only, ""); }),
              testing::HasSubstr("redis.sentinels"));
  auto sentinels_only =
      config::apply_json(R"({"redis": {"sentinels": ["h"]}})", "test");
  EXPECT_THAT(
      refusal([&] { cli::apply_redis_credentials(sentinels_only, ""); }),
      testing::HasSubstr("redis.master_name"));
  auto bad_host = config::apply_json(
      R"({"redis": {"sentinels": ["h:0"], "master_name": "m"}})", "test");
  EXPECT_THAT(refusal([&] { cli::apply_redis_credentials(bad_host, ""); }),
              testing::HasSubstr("redis.sentinels: expected HOST[:PORT]"));
  auto with_file = config::apply_json(
      R"({"redis": {"sentinels": ["h"], "master_name": "m",
                    "sentinel_password_file": ")" +
          password_file("pw\n", 0600) + R"("}})",
      "test");
  cli::apply_redis_credentials(with_file, "");
  EXPECT_EQ(with_file.redis.sentinel->password, "pw");
}

} // namespace
