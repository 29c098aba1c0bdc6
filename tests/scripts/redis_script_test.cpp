// scripts/redis: its files are its user's only, and its pidfile is trusted
// only when that pid is the server answering on the recorded port, so a
// stale or forged pidfile never makes it report, reuse or signal another
// redis-server.

#include "broker/connection.hpp"
#include "support/file_checks.hpp"
#include "tests/scripts/script_fixture.hpp"

#include <hiredis/hiredis.h>

namespace outbox::test {
namespace {

using ScriptRedis = script_fixture;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST_F(ScriptRedis, StartKeepsItsFilesToItsUser) {
  scoped_umask usual{022};
  auto start = script("redis", {"start"});
  ASSERT_EQ(start.exit_code, 0) << start.err;
  auto pid = recorded_pid();
  ASSERT_TRUE(running(pid));
  auto status = script("redis", {"status"});
  EXPECT_EQ(status.exit_code, 0) << status.err;
  EXPECT_EQ(status.out, "running (pid " + std::to_string(pid) + ", port " +
                            std::to_string(port_) + ")\n");

  // Something written, so the AOF has content too.
  broker::connection_options where;
  where.where = {"127.0.0.1", port_};
  broker::connection{where}.command({"SET", "k", "v"});
  EXPECT_EQ(mode_of(var_), 0700);
  EXPECT_EQ(mode_of(redis_dir()), 0700);
  for (auto name : {"redis.pid", "redis.port", "redis.log"})
    EXPECT_EQ(mode_of(redis_dir() / name), 0600) << name;
  auto open = not_private_under(var_);
  EXPECT_TRUE(open.empty()) << ::testing::PrintToString(open);

  auto stop = script("redis", {"stop"});
  EXPECT_EQ(stop.exit_code, 0) << stop.err;
  EXPECT_TRUE(ends_within(pid, 5'000));
  EXPECT_EQ(script("redis", {"status"}).exit_code, 1);
}

TEST_F(ScriptRedis, AForgedPidfileIsNeitherTrustedNorSignalled) {
  redis_server foreign;
  foreign_pid_ = foreign.pid();
  auto foreign_text = "pid " + std::to_string(foreign.pid());
  write_pidfile(foreign.pid());

  auto status = script("redis", {"status"});
  EXPECT_EQ(status.exit_code, 1) << status.out << status.err;
  EXPECT_TRUE(contains(status.out, "stopped")) << status.out;
  EXPECT_TRUE(contains(status.out, foreign_text + " of ")) << status.out;
  EXPECT_TRUE(contains(status.out,
                       "is not the server on port " + std::to_string(port_)))
      << status.out;

  auto stop = script("redis", {"stop"});
  EXPECT_EQ(stop.exit_code, 0) << stop.err;
  EXPECT_TRUE(contains(stop.err, "left alone")) << stop.err;
  // A signalled server would be gone: stop waits for its end.
  EXPECT_TRUE(running(foreign.pid())) << "the foreign server was stopped";
  EXPECT_EQ(
      broker::connection{foreign.connection_options()}.command({"PING"})->type,
      REDIS_REPLY_STATUS);
  write_pidfile(foreign.pid());

  auto start = script("redis", {"start"});
  EXPECT_EQ(start.exit_code, 0) << start.err;
  EXPECT_TRUE(contains(start.err, "ignoring the old pidfile")) << start.err;
  auto ours = recorded_pid();
  EXPECT_NE(ours, foreign.pid());
  EXPECT_TRUE(running(ours));
  EXPECT_TRUE(running(foreign.pid()));
  auto again = script("redis", {"status"});
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_TRUE(contains(again.out, "running (pid " + std::to_string(ours)))
      << again.out;
}

TEST_F(ScriptRedis, StartRefusesARedisItDidNotStart) {
  redis_server foreign;
  foreign_pid_ = foreign.pid();
  auto port = std::to_string(foreign.endpoint().port);
  auto start = script("redis", {"start"}, {"OUTBOX_REDIS_PORT=" + port});
  EXPECT_EQ(start.exit_code, 1) << start.err;
  EXPECT_TRUE(contains(start.err, "another Redis (pid " +
                                      std::to_string(foreign.pid()) +
                                      ") already answers on 127.0.0.1:" + port))
      << start.err;
  EXPECT_EQ(recorded_pid(), -1);
  EXPECT_TRUE(running(foreign.pid()));
}

} // namespace
} // namespace outbox::test

namespace outbox::test {

TEST_F(ScriptRedis, StartRefusesASecondServerOnItsData) {
  // A server working in var/redis that the pidfile does not name (its
  // pidfile and portfile lost): a second one beside it would append to
  // the same AOF.
  std::filesystem::create_directories(redis_dir());
  redis_server::options opts;
  opts.extra_args = {"--dir", redis_dir().string()};
  redis_server stray{opts};
  foreign_pid_ = stray.pid();
  auto start = script("redis", {"start"});
  EXPECT_EQ(start.exit_code, 1) << start.err;
  EXPECT_TRUE(contains(start.err, "redis-server pid " +
                                      std::to_string(stray.pid()) +
                                      " already runs on the data in"))
      << start.err;
  EXPECT_EQ(recorded_pid(), -1) << "a second server was started";
  EXPECT_TRUE(running(stray.pid()));
}

} // namespace outbox::test
