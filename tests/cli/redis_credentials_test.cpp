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

} // namespace
