#include "tests/faults/fault_world.hpp"

#include <gmock/gmock.h>
#include <hiredis/hiredis.h>

namespace outbox::test {
namespace {

constexpr const char* start_app_password = "Rs5-app-pw";

/// The application's ACL user lacks `rules` from the start, or the server
/// lacks a command (`rename-command` to ""), as behind a proxy that does
/// not pass it on.
redis_server::options refusing_server(const std::string& user_rules,
                                      const std::string& extra_line = "") {
  redis_server::options opts;
  opts.config_lines = {std::string{"user app on >"} + start_app_password +
                       " ~* &* +@all " + user_rules};
  if (!extra_line.empty())
    opts.config_lines.push_back(extra_line);
  return opts;
}

/// A Redis that refuses a command the pipeline needs before anything
/// runs: `outbox run` says so and exits 2 before it writes anything, and
/// `outbox status --check` is unhealthy naming it. Both ask Redis without
/// running the commands (MULTI, then DISCARD).
class FaultRedisRefusalAtStart : public fault_world {
protected:
  explicit FaultRedisRefusalAtStart(redis_server::options opts)
      : fault_world(std::move(opts)) {}

  void SetUp() override {
    write_config(
        {{"redis", {{"username", "app"}, {"password", start_app_password}}}});
    ASSERT_EQ(outbox({"init"}).exit_code, 0);
  }

  /// Every key in the server: the refused start must have written none.
  long long keys_in_redis() const {
    return redis().command({"DBSIZE"})->integer;
  }

  void expect_refused_at_start(const std::string& command,
                               const std::string& words,
                               const std::vector<std::string>& flags) {
    std::vector<std::string> run{"run", "--until-drained", "--orders", "20"};
    run.insert(run.end(), flags.begin(), flags.end());
    auto r = outbox(run);
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_THAT(r.err,
                testing::HasSubstr("outbox run: Redis at " +
                                   redis_->endpoint().to_string() +
                                   " refuses user \"app\" commands this run "
                                   "needs (not an outage: fix the ACL or the "
                                   "proxy): "))
        << r.err;
    EXPECT_THAT(r.err, testing::HasSubstr(command)) << r.err;
    EXPECT_THAT(r.err, testing::HasSubstr(words)) << r.err;
    EXPECT_THAT(r.err, testing::Not(testing::HasSubstr(start_app_password)));
    EXPECT_EQ(keys_in_redis(), 0) << "the refused run wrote to Redis";
    auto orders = outbox({"status", "--json"});
    auto status = nlohmann::json::parse(orders.out, nullptr, false);
    ASSERT_FALSE(status.is_discarded()) << orders.out << orders.err;
    EXPECT_EQ(status["outbox"].value("orders", -1), 0);
  }

  void expect_unhealthy(const std::string& command, const std::string& words) {
    auto r = outbox({"status", "--check", "--json"});
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    auto status = nlohmann::json::parse(r.out, nullptr, false);
    ASSERT_FALSE(status.is_discarded()) << r.out << r.err;
    auto refused = status["redis"]["refused_commands"];
    ASSERT_FALSE(refused.empty()) << status.dump(2);
    bool named = false;
    for (const auto& one : refused)
      named = named || (one.value("command", "").rfind(command, 0) == 0 &&
                        one.value("error", "").find(words) == 0);
    EXPECT_TRUE(named) << refused.dump(2);
    EXPECT_FALSE(status["health"].value("ok", true));
    EXPECT_THAT(status["health"]["problems"].dump(),
                testing::HasSubstr("Redis refuses the pipeline's commands"));
  }
};

class FaultRedisRefusalAcl : public FaultRedisRefusalAtStart {
protected:
  FaultRedisRefusalAcl()
      : FaultRedisRefusalAtStart(refusing_server("-evalsha")) {}
};

TEST_F(FaultRedisRefusalAcl, ARunWithoutACommandItNeedsExits2AtStart) {
  auto words =
      std::string{"NOPERM this user has no permissions to run the 'evalsha'"};
  expect_refused_at_start("EVALSHA", words, {});
  expect_unhealthy("EVALSHA", words);
  // A writer-only process sends none of them: it starts.
  auto writer = outbox({"run", "--until-drained", "--orders", "5", "--relays",
                        "0", "--consumers", "0"});
  EXPECT_EQ(writer.exit_code, 0) << writer.out << writer.err;
}

class FaultRedisRefusalUnknownCommand : public FaultRedisRefusalAtStart {
protected:
  FaultRedisRefusalUnknownCommand()
      : FaultRedisRefusalAtStart(
            refusing_server("", "rename-command EVALSHA \"\"")) {}
};

TEST_F(FaultRedisRefusalUnknownCommand, AServerWithoutTheCommandExits2) {
  expect_refused_at_start("EVALSHA", "ERR unknown command", {});
  expect_unhealthy("EVALSHA", "ERR unknown command");
}

class FaultRedisRefusalWait : public FaultRedisRefusalAtStart {
protected:
  FaultRedisRefusalWait()
      : FaultRedisRefusalAtStart(refusing_server("-wait")) {}
};

/// Relays that wait for replicas need WAIT: without it every push would be
/// held back as an outage and pushed again, forever. Relays that do not
/// wait never send it.
TEST_F(FaultRedisRefusalWait, RelaysThatWaitForReplicasNeedWait) {
  write_config({{"redis",
                 {{"username", "app"},
                  {"password", start_app_password},
                  {"min_replica_acks", 1},
                  {"replica_ack_timeout_ms", 100}}}});
  expect_refused_at_start(
      "WAIT", "NOPERM this user has no permissions to run the 'wait'", {});
  write_config(
      {{"redis", {{"username", "app"}, {"password", start_app_password}}}});
  auto run = outbox({"run", "--until-drained", "--orders", "5"});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
}

} // namespace
} // namespace outbox::test
