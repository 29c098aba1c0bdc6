// scripts/run never uses a Redis it did not start, unless the user names
// one: it starts (or reuses) its private Redis, checks that the server on
// its port is the pid of its pidfile, and points outbox at it through
// OUTBOX_REDIS, over the config file's address.

#include "broker/connection.hpp"
#include "support/file_checks.hpp"
#include "tests/scripts/script_fixture.hpp"

#include <SQLiteCpp/Database.h>
#include <hiredis/hiredis.h>
#include <sys/stat.h>
#include <unistd.h>

namespace outbox::test {
namespace {

class ScriptRun : public script_fixture {
protected:
  /// A number a Redis command answers on `where`.
  static long long number(const broker::connection_options& where,
                          const std::vector<std::string>& command) {
    auto reply = broker::connection{where}.command(command);
    return reply->type == REDIS_REPLY_INTEGER ? reply->integer : -1;
  }

  broker::connection_options private_redis() const {
    broker::connection_options where;
    where.where = {"127.0.0.1", port_};
    return where;
  }

  redis_server foreign_;
};

TEST_F(ScriptRun, RefusesARedisItDidNotStartNamingThePort) {
  foreign_pid_ = foreign_.pid();
  auto port = std::to_string(foreign_.endpoint().port);
  for (const char* command : {"status", "init"}) {
    auto r = script("run", {command}, {"OUTBOX_REDIS_PORT=" + port});
    EXPECT_EQ(r.exit_code, 1) << command << ": " << r.err;
    EXPECT_NE(r.err.find("already answers on 127.0.0.1:" + port),
              std::string::npos)
        << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  EXPECT_FALSE(std::filesystem::exists(var_ / "outbox.db"));
  EXPECT_EQ(number(foreign_.connection_options(), {"DBSIZE"}), 0);
}

TEST_F(ScriptRun, APipelineGoesThroughThePrivateRedisNotTheConfiguredOne) {
  scoped_umask usual{022};
  // As the repository's config/outbox.json names 6379, where a system Redis
  // may answer: the private Redis wins over the config file.
  std::filesystem::create_directory(tmp_.path() / "config");
  std::ofstream{tmp_.path() / "config" / "outbox.json"}
      << R"({"redis": {"port": )" << foreign_.endpoint().port << "}}";

  auto init = script("run", {"init"});
  ASSERT_EQ(init.exit_code, 0) << init.err;
  EXPECT_EQ(mode_of(var_), 0700);
  EXPECT_EQ(mode_of(var_ / "outbox.db"), 0600);
  auto order = script("run", {"place-order", "--sku", "apple", "--qty", "2",
                              "--request-id", "r-1"});
  ASSERT_EQ(order.exit_code, 0) << order.err;
  auto run = script(
      "run", {"run", "--relays", "1", "--consumers", "1", "--until-drained"});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  auto status = script("run", {"status"});
  EXPECT_EQ(status.exit_code, 0) << status.out << status.err;

  // Under the pipeline's own key prefix (broker.key_prefix).
  EXPECT_EQ(number(private_redis(), {"HLEN", "pipeline:processed"}), 1);
  EXPECT_EQ(number(foreign_.connection_options(), {"DBSIZE"}), 0);
  // One private server for the four commands.
  EXPECT_TRUE(running(recorded_pid()));
}

/// The README's first two commands in a fresh folder, with a Redis of
/// someone else's answering on the port the config names (as a system
/// Redis answers on 6379): they work, create var/ for the default
/// database, and never write to that Redis.
TEST_F(ScriptRun, TheReadmeCommandsWorkBesideAForeignRedis) {
  broker::connection foreign{foreign_.connection_options()};
  foreign.command({"SET", "someone.else", "1"});
  std::filesystem::create_directory(tmp_.path() / "config");
  std::ofstream{tmp_.path() / "config" / "outbox.json"}
      << R"({"redis": {"port": )" << foreign_.endpoint().port << "}}";
  auto init = script("run", {"init"});
  ASSERT_EQ(init.exit_code, 0) << init.err;
  auto order = script("run", {"place-order", "--sku", "apple", "--qty", "1",
                              "--request-id", "r-1"});
  ASSERT_EQ(order.exit_code, 0) << order.err;
  EXPECT_EQ(mode_of(var_), 0700);
  EXPECT_TRUE(std::filesystem::exists(var_ / "outbox.db"));
  EXPECT_EQ(number(foreign_.connection_options(), {"DBSIZE"}), 1);
}

TEST_F(ScriptRun, TheReadmeCommandsWorkForAnotherUserBesideAForeignRedis) {
  if (::geteuid() != 0)
    GTEST_SKIP() << "needs root to run the commands as another user";
  constexpr uid_t nobody = 65534;
  broker::connection foreign{foreign_.connection_options()};
  foreign.command({"SET", "someone.else", "1"});
  std::filesystem::create_directory(tmp_.path() / "config");
  std::ofstream{tmp_.path() / "config" / "outbox.json"}
      << R"({"redis": {"port": )" << foreign_.endpoint().port << "}}";
  // A folder of that user's own, as a fresh clone in their home would be.
  for (const auto& path : {tmp_.path(), tmp_.path() / "config",
                           tmp_.path() / "config" / "outbox.json"})
    ASSERT_EQ(::chown(path.c_str(), nobody, nobody), 0) << path;
  launcher_ = {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534",
               "--clear-groups", "--"};
  auto init = script("run", {"init"}, {"HOME=" + tmp_.path().string()});
  ASSERT_EQ(init.exit_code, 0) << init.out << init.err;
  auto order = script(
      "run",
      {"place-order", "--sku", "apple", "--qty", "1", "--request-id", "r-1"},
      {"HOME=" + tmp_.path().string()});
  ASSERT_EQ(order.exit_code, 0) << order.out << order.err;
  struct ::stat var_stat {};
  ASSERT_EQ(::stat(var_.c_str(), &var_stat), 0);
  EXPECT_EQ(var_stat.st_uid, nobody);
  EXPECT_EQ(mode_of(var_), 0700);
  EXPECT_TRUE(std::filesystem::exists(var_ / "outbox.db"));
  EXPECT_EQ(number(foreign_.connection_options(), {"DBSIZE"}), 1);
}

TEST_F(ScriptRun, ANamedRedisStartsNothing) {
  auto named = "127.0.0.1:" + std::to_string(foreign_.endpoint().port);
  auto init = script("run", {"init", "--redis", named});
  EXPECT_EQ(init.exit_code, 0) << init.err;
  EXPECT_TRUE(std::filesystem::exists(var_ / "outbox.db"));
  auto status = script("run", {"status"}, {"OUTBOX_REDIS=" + named});
  EXPECT_EQ(status.exit_code, 0) << status.out << status.err;
  EXPECT_FALSE(std::filesystem::exists(redis_dir())) << "a Redis was started";
}

} // namespace
} // namespace outbox::test
