// Redis as it is deployed: a server that wants a password for its default
// user and has an ACL user for the application, which gets a logical
// database of its own. The real binary runs the pipeline and every command
// that reads Redis through that user; the password shows up nowhere.

#include "broker/connection.hpp"
#include "support/fast_config.hpp"
#include "support/process.hpp"
#include "support/redis_server.hpp"
#include "support/temp_dir.hpp"

#include <hiredis/hiredis.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/stat.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace outbox::test {
namespace {

constexpr const char* app_password = "Zq7-app-pw";
constexpr const char* admin_password = "Xk4-admin-pw";

class E2ERedisAuth : public ::testing::Test {
protected:
  static redis_server::options server_options() {
    redis_server::options opts;
    opts.config_lines = {std::string{"requirepass "} + admin_password,
                         std::string{"user app on >"} + app_password +
                             " ~* &* +@all"};
    opts.password = admin_password;
    return opts;
  }

  void SetUp() override {
    std::ofstream{config_} << fast_config({{"lease", {{"max_attempts", 50}}}});
    ASSERT_EQ(outbox({"init"}).exit_code, 0);
  }

  /// The ACL user on database 3, password and all, as a URI.
  std::string app_uri(const std::string& password = app_password) const {
    return "redis://app:" + password + "@" + redis_.endpoint().to_string() +
           "/3";
  }

  /// `outbox ARGS --db ... --config ...` with OUTBOX_REDIS and
  /// OUTBOX_REDIS_PASSWORD unset, then `env` set (NAME=VALUE).
  std::vector<std::string> argv(std::vector<std::string> args,
                                const std::vector<std::string>& env = {},
                                const std::string& config = "") const {
    std::vector<std::string> all{"/usr/bin/env", "-u", "OUTBOX_REDIS", "-u",
                                 "OUTBOX_REDIS_PASSWORD"};
    all.insert(all.end(), env.begin(), env.end());
    args.insert(args.end(), {"--db", dir_.file("app.db"), "--config",
                             config.empty() ? config_ : config});
    auto outbox = outbox_argv(args);
    all.insert(all.end(), outbox.begin(), outbox.end());
    return all;
  }

  process_result outbox(std::vector<std::string> args,
                        const std::vector<std::string>& env = {},
                        const std::string& config = "",
                        int timeout_ms = 60'000) {
    return run_process(argv(std::move(args), env, config), dir_.path().string(),
                       timeout_ms);
  }

  /// The server as its administrator sees database `db`.
  std::unique_ptr<broker::connection> admin(int db) const {
    auto o = redis_.connection_options();
    o.db = db;
    return std::make_unique<broker::connection>(o);
  }

  long long dbsize(int db) const {
    return admin(db)->command({"DBSIZE"})->integer;
  }

  static void expect_no_password(const process_result& r,
                                 const std::string& password = app_password) {
    EXPECT_THAT(r.out, testing::Not(testing::HasSubstr(password)));
    EXPECT_THAT(r.err, testing::Not(testing::HasSubstr(password)));
  }

  /// A config naming the ACL user and database 3, its password in a file
  /// of mode `mode`.
  std::string config_with_password_file(mode_t mode) {
    auto secret = dir_.file("redis.pw");
    std::ofstream{secret} << app_password << '\n';
    ::chmod(secret.c_str(), mode);
    auto path = dir_.file("with-file.json");
    std::ofstream{path} << R"({
      "db": {"busy_timeout_ms": 150},
      "redis": {"host": "127.0.0.1", "port": )"
                        << redis_.endpoint().port << R"(,
                "username": "app", "db": 3, "password_file": ")"
                        << secret << R"(", "io_timeout_ms": 200},
      "lease": {"ttl_ms": 400, "batch": 64, "max_attempts": 50},
      "run": {"poll_interval_ms": 10, "idle_poll_max_ms": 100,
              "consumer_block_ms": 50}
    })";
    return path;
  }

  temp_dir dir_{"outbox-auth"};
  std::string config_ = dir_.file("run.json");
  redis_server redis_{server_options()};
};

TEST_F(E2ERedisAuth, PipelineRunsAsAnAclUserOnItsOwnDatabase) {
  auto run =
      outbox({"run", "--until-drained", "--json", "--relays", "2",
              "--consumers", "2", "--orders", "200", "--redis", app_uri()},
             {}, "", 120'000);
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  auto report = nlohmann::json::parse(run.out);
  EXPECT_TRUE(report.at("ok").get<bool>()) << report.dump(2);
  EXPECT_EQ(report.at("processed_unique"), report.at("outbox_rows"));
  expect_no_password(run);
  EXPECT_EQ(dbsize(0), 0) << "the pipeline wrote outside database 3";
  EXPECT_GT(dbsize(3), 0);

  // Every command that reads Redis does it the same way.
  for (const std::vector<std::string>& command :
       {std::vector<std::string>{"status", "--json"},
        std::vector<std::string>{"verify", "--json"},
        std::vector<std::string>{"trim", "--processed-older-than", "1h",
                                 "--json"},
        std::vector<std::string>{"dead-letters", "--json"}}) {
    auto args = command;
    args.insert(args.end(), {"--redis", app_uri()});
    auto r = outbox(args);
    EXPECT_EQ(r.exit_code, 0) << command[0] << ": " << r.out << r.err;
    EXPECT_TRUE(nlohmann::json::accept(r.out)) << r.out;
    expect_no_password(r);
  }
  auto status = outbox({"status", "--json", "--redis", app_uri()});
  auto connection =
      nlohmann::json::parse(status.out).at("redis").at("connection");
  EXPECT_EQ(connection.at("address"), redis_.endpoint().to_string());
  EXPECT_EQ(connection.at("user"), "app");
  EXPECT_EQ(connection.at("db"), 3);
  auto verify = outbox({"verify", "--json", "--redis", app_uri()});
  // Kept in a variable: a range-for over at() of a temporary would walk a
  // destroyed object.
  auto verdict = nlohmann::json::parse(verify.out);
  for (const auto& check : verdict.at("checks"))
    EXPECT_EQ(check.at("result"), "passed") << check.dump();
  EXPECT_EQ(dbsize(0), 0);
}

TEST_F(E2ERedisAuth, AWrongPasswordExits1NamingUserAndAddress) {
  const std::string wrong = "N0t-th1s-0ne";
  auto expected = "Redis at " + redis_.endpoint().to_string() +
                  " refused user \"app\": wrong password";
  for (const std::vector<std::string>& command :
       {std::vector<std::string>{"status"}, std::vector<std::string>{"verify"},
        std::vector<std::string>{"run", "--until-drained", "--orders", "1"}}) {
    auto args = command;
    args.insert(args.end(), {"--redis", app_uri(wrong)});
    auto r = outbox(args);
    EXPECT_EQ(r.exit_code, 1) << command[0] << ": " << r.out << r.err;
    EXPECT_NE((r.out + r.err).find(expected), std::string::npos) << r.err;
    expect_no_password(r, wrong);
  }
  EXPECT_EQ(dbsize(0), 0);
  EXPECT_EQ(dbsize(3), 0);
}

TEST_F(E2ERedisAuth, NoPasswordWhereRedisRequiresOneSaysSo) {
  auto r = outbox({"status", "--redis", redis_.endpoint().to_string()});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE((r.out + r.err)
                .find("Redis at " + redis_.endpoint().to_string() +
                      " requires a password (NOAUTH)"),
            std::string::npos)
      << r.out << r.err;
}

TEST_F(E2ERedisAuth, ThePasswordFromTheEnvironmentOrAFile) {
  // requirepass alone: the default user, from OUTBOX_REDIS_PASSWORD.
  auto from_env =
      outbox({"status", "--json", "--redis", redis_.endpoint().to_string()},
             {std::string{"OUTBOX_REDIS_PASSWORD="} + admin_password});
  EXPECT_EQ(from_env.exit_code, 0) << from_env.out << from_env.err;
  expect_no_password(from_env, admin_password);
  // The URI's own password wins over the variable.
  auto uri_wins = outbox({"status", "--redis", app_uri()},
                         {"OUTBOX_REDIS_PASSWORD=N0t-th1s-0ne"});
  EXPECT_EQ(uri_wins.exit_code, 0) << uri_wins.out << uri_wins.err;
  // The variable wins over the file.
  auto env_wins = outbox({"status"}, {"OUTBOX_REDIS_PASSWORD=N0t-th1s-0ne"},
                         config_with_password_file(0600));
  EXPECT_EQ(env_wins.exit_code, 1) << env_wins.out << env_wins.err;
  EXPECT_NE((env_wins.out + env_wins.err)
                .find("refused user \"app\": wrong password"),
            std::string::npos)
      << env_wins.out << env_wins.err;

  auto from_file =
      outbox({"status", "--json"}, {}, config_with_password_file(0600));
  EXPECT_EQ(from_file.exit_code, 0) << from_file.out << from_file.err;
  expect_no_password(from_file);
  // A password file others may read is refused before anything is done.
  auto shared = outbox({"status"}, {}, config_with_password_file(0644));
  EXPECT_EQ(shared.exit_code, 2) << shared.out << shared.err;
  EXPECT_THAT(shared.err, testing::HasSubstr("redis.password_file: "));
  EXPECT_THAT(shared.err,
              testing::HasSubstr("readable or writable by other users (mode "
                                 "0644)"));
  expect_no_password(shared);
}

TEST_F(E2ERedisAuth, PsShowsNoPasswordGivenByFileOrEnvironment) {
  auto check = [this](const std::vector<std::string>& args,
                      const std::vector<std::string>& env,
                      const std::string& config) {
    child_process run{argv(args, env, config), dir_.path().string()};
    ASSERT_TRUE(run.wait_for_stderr("outbox run: running", 30'000));
    std::ifstream cmdline{"/proc/" + std::to_string(run.pid()) + "/cmdline"};
    std::string text{std::istreambuf_iterator<char>{cmdline}, {}};
    EXPECT_THAT(text, testing::HasSubstr("run"));
    EXPECT_THAT(text, testing::Not(testing::HasSubstr(app_password)));
    run.signal(SIGTERM);
    auto r = run.wait(30'000);
    EXPECT_EQ(r.signal, 0) << r.out << r.err; // it stopped on its own
    EXPECT_NE(r.exit_code, -1) << r.out << r.err;
    expect_no_password(r);
  };
  check({"run", "--relays", "1", "--consumers", "1"}, {},
        config_with_password_file(0600));
  // The user in the address, the password in the environment.
  check({"run", "--relays", "1", "--consumers", "1", "--redis",
         "redis://app:@" + redis_.endpoint().to_string() + "/3"},
        {std::string{"OUTBOX_REDIS_PASSWORD="} + app_password}, "");
  EXPECT_EQ(dbsize(0), 0);
}

TEST_F(E2ERedisAuth, KilledConnectionsReauthenticateAndTheRunDrains) {
  child_process run{
      argv({"run", "--until-drained", "--json", "--relays", "2", "--consumers",
            "2", "--orders", "300", "--rate", "100", "--redis", app_uri()}),
      dir_.path().string()};
  // Once every relay and consumer is connected (2 + 2, besides the
  // process's own), kill every connection of the pipeline's user.
  auto watcher = admin(3);
  auto connected = [&] {
    auto list = broker::reply_text(*watcher->command({"CLIENT", "LIST"}));
    int count = 0;
    for (auto at = list.find(" user=app "); at != std::string::npos;
         at = list.find(" user=app ", at + 1))
      ++count;
    return count;
  };
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (connected() < 5 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_GE(connected(), 5) << "the pipeline did not connect";
  auto killed = watcher->command({"CLIENT", "KILL", "USER", "app"});
  EXPECT_GE(killed->integer, 5);
  ASSERT_FALSE(run.exited_within(0)) << "the run ended before the kill";

  auto r = run.wait(120'000);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto report = nlohmann::json::parse(r.out);
  EXPECT_TRUE(report.at("ok").get<bool>()) << report.dump(2);
  EXPECT_EQ(report.at("orders"), 300);
  EXPECT_EQ(report.at("processed_unique"), report.at("outbox_rows"));
  expect_no_password(r);
  // A reconnect without SELECT would have written into database 0.
  EXPECT_EQ(dbsize(0), 0);
}

} // namespace
} // namespace outbox::test
