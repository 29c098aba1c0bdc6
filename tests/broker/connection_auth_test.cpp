// Every connection says who it is and which database it uses, on its first
// connect and on every reconnect: a private redis-server with requirepass
// for the default user and an ACL user, as a managed Redis has.

#include "broker/connection.hpp"

#include "broker/broker_error.hpp"
#include "support/redis_server.hpp"

#include <hiredis/hiredis.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

using namespace outbox::broker;
using outbox::test::redis_server;

namespace {

class BrokerConnectionAuth : public ::testing::Test {
public:
  static void SetUpTestSuite() {
    redis_server::options opts;
    opts.config_lines = {"requirepass adminpw",
                         "user app on >apppw ~* &* +@all"};
    opts.password = "adminpw";
    server_ = std::make_unique<redis_server>(opts);
  }
  static void TearDownTestSuite() { server_.reset(); }

  void SetUp() override {
    admin_ = std::make_unique<connection>(server_->connection_options());
    admin_->command({"FLUSHALL"});
  }

protected:
  /// Options for the ACL user on database `db`.
  static connection_options as_app(const std::string& password, int db) {
    auto o = server_->connection_options();
    o.username = "app";
    o.password = password;
    o.db = db;
    return o;
  }

  /// The broker_error a first command on `o` throws; fails when none.
  static broker_error refusal(const connection_options& o) {
    connection c{o};
    try {
      c.command({"PING"});
    } catch (const broker_error& e) {
      return e;
    }
    ADD_FAILURE() << "connected";
    return broker_error{broker_errc::rejected, ""};
  }

  long long integer(connection& c, const std::vector<std::string>& argv) {
    auto r = c.command(argv);
    EXPECT_EQ(r->type, REDIS_REPLY_INTEGER);
    return r->integer;
  }

  static std::unique_ptr<redis_server> server_;
  std::unique_ptr<connection> admin_;
};

std::unique_ptr<redis_server> BrokerConnectionAuth::server_;

TEST_F(BrokerConnectionAuth, AnAclUserWritesIntoItsDatabaseOnly) {
  connection app{as_app("apppw", 3)};
  app.command({"SET", "k", "v"});
  EXPECT_EQ(integer(*admin_, {"DBSIZE"}), 0);
  admin_->command({"SELECT", "3"});
  EXPECT_EQ(integer(*admin_, {"EXISTS", "k"}), 1);
  auto who = app.command({"ACL", "WHOAMI"});
  EXPECT_EQ(reply_text(*who), "app");
}

TEST_F(BrokerConnectionAuth, AReconnectAuthenticatesAndSelectsAgain) {
  connection app{as_app("apppw", 3)};
  app.command({"SET", "before", "1"});
  EXPECT_GE(integer(*admin_, {"CLIENT", "KILL", "USER", "app"}), 1);
  // The killed connection fails once (the owner retries), then reconnects.
  try {
    app.command({"SET", "after", "1"});
  } catch (const broker_error& e) {
    EXPECT_EQ(e.code(), broker_errc::unavailable) << e.what();
    app.command({"SET", "after", "1"});
  }
  admin_->command({"SELECT", "3"});
  EXPECT_EQ(integer(*admin_, {"EXISTS", "before", "after"}), 2);
  admin_->command({"SELECT", "0"});
  EXPECT_EQ(integer(*admin_, {"DBSIZE"}), 0);
}

TEST_F(BrokerConnectionAuth, AWrongPasswordNamesTheUserAndTheAddress) {
  auto e = refusal(as_app("N0tTh1s", 0));
  EXPECT_EQ(e.code(), broker_errc::unavailable);
  std::string what = e.what();
  EXPECT_NE(what.find("Redis at " + server_->endpoint().to_string() +
                      " refused user \"app\": wrong password"),
            std::string::npos)
      << what;
  EXPECT_THAT(what, testing::Not(testing::HasSubstr("N0tTh1s")));
  // A password alone is the default user's.
  auto o = server_->connection_options();
  o.password = "N0tTh1s";
  std::string as_default = refusal(o).what();
  EXPECT_THAT(as_default,
              testing::HasSubstr("refused user \"default\": wrong password"));
}

TEST_F(BrokerConnectionAuth, NoPasswordWhereOneIsRequiredSaysSo) {
  auto o = server_->connection_options();
  o.password.clear();
  std::string what = refusal(o).what();
  EXPECT_NE(what.find("Redis at " + server_->endpoint().to_string() +
                      " requires a password (NOAUTH)"),
            std::string::npos)
      << what;
  o.db = 2; // the SELECT is refused the same way
  std::string selecting = refusal(o).what();
  EXPECT_THAT(selecting, testing::HasSubstr("requires a password (NOAUTH)"));
}

TEST_F(BrokerConnectionAuth, ADatabaseRedisDoesNotHaveIsNamed) {
  std::string what = refusal(as_app("apppw", 16)).what();
  EXPECT_THAT(what, testing::HasSubstr("has no logical database 16"));
}

} // namespace
