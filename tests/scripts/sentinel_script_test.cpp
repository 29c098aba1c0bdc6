// scripts/redis sentinel: a private master, replica and three sentinels
// that outbox finds its master through, stopped by their pidfiles.

#include "broker/connection.hpp"
#include "support/file_checks.hpp"
#include "tests/scripts/script_fixture.hpp"

#include <gmock/gmock.h>

#include <signal.h>

#include <fstream>

namespace outbox::test {
namespace {

using ScriptRedisSentinel = script_fixture;

const char* const members[] = {"master", "replica", "sentinel-1", "sentinel-2",
                               "sentinel-3"};

/// `count` loopback ports in a row where nothing listens, the first
/// returned (free_loopback_port binds the first; the others are tried).
int free_ports_in_a_row(int count) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    int first = free_loopback_port();
    bool all = first + count <= 65535;
    for (int i = 1; all && i < count; ++i) {
      broker::connection_options at;
      at.where = {"127.0.0.1", first + i};
      at.connect_timeout_ms = 200;
      try {
        broker::connection{at}.ensure_connected();
        all = false; // something answers there
      } catch (const std::exception&) {
      }
    }
    if (all)
      return first;
  }
  throw std::runtime_error("no free ports in a row");
}

class set_reaper {
public:
  explicit set_reaper(std::filesystem::path dir) : dir_(std::move(dir)) {}
  /// Whatever the test did, nothing it started stays: each pidfile's
  /// server, when it is still a redis-server.
  ~set_reaper() {
    for (auto name : members) {
      pid_t pid = pid_of(name);
      std::ifstream comm{"/proc/" + std::to_string(pid) + "/comm"};
      std::string program;
      if (pid > 0 && comm >> program && program.rfind("redis-server", 0) == 0)
        ::kill(pid, SIGKILL);
    }
  }
  pid_t pid_of(const std::string& name) const {
    std::ifstream in{dir_ / name / "server.pid"};
    pid_t pid = -1;
    in >> pid;
    return pid;
  }

private:
  std::filesystem::path dir_;
};

TEST_F(ScriptRedisSentinel, StartsASetOutboxFollowsAndStopsItByItsPidfiles) {
  int redis_port = free_ports_in_a_row(2);
  int sentinel_port = free_ports_in_a_row(3);
  std::vector<std::string> env{
      "OUTBOX_SENTINEL_REDIS_PORT=" + std::to_string(redis_port),
      "OUTBOX_SENTINEL_PORT=" + std::to_string(sentinel_port)};
  set_reaper reaper{var_ / "redis-sentinel"};
  auto start = script("redis", {"sentinel", "start"}, env);
  ASSERT_EQ(start.exit_code, 0) << start.out << start.err;
  std::string address = "redis-sentinel://";
  for (int i = 0; i < 3; ++i)
    address += (i == 0 ? "" : ",") + std::string{"127.0.0.1:"} +
               std::to_string(sentinel_port + i);
  address += "#outbox";
  EXPECT_THAT(start.err, testing::HasSubstr("--redis '" + address + "'"));
  EXPECT_EQ(mode_of(var_ / "redis-sentinel"), 0700);

  auto status = script("redis", {"sentinel", "status"}, env);
  EXPECT_EQ(status.exit_code, 0) << status.out << status.err;
  EXPECT_THAT(status.out,
              testing::HasSubstr("127.0.0.1:" + std::to_string(redis_port)));

  // What outbox would do with that address: ask, and write to the master.
  broker::connection_options options;
  options.sentinel = broker::sentinel_set{};
  options.sentinel->master_name = "outbox";
  for (int i = 0; i < 3; ++i)
    options.sentinel->sentinels.push_back({"127.0.0.1", sentinel_port + i});
  broker::connection conn{options};
  conn.command({"SET", "k", "v"});
  EXPECT_EQ(conn.options().where.port, redis_port);

  std::vector<pid_t> pids;
  for (auto name : members)
    pids.push_back(reaper.pid_of(name));
  auto stop = script("redis", {"sentinel", "stop"}, env);
  EXPECT_EQ(stop.exit_code, 0) << stop.out << stop.err;
  for (auto pid : pids)
    EXPECT_TRUE(pid > 0 && ends_within(pid, 5'000)) << pid;
  EXPECT_EQ(script("redis", {"sentinel", "status"}, env).exit_code, 1);
  EXPECT_EQ(script("redis", {"sentinel", "restart"}, env).exit_code, 1);
}

} // namespace
} // namespace outbox::test
