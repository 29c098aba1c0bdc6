#pragma once

// scripts/redis and scripts/run as a user runs them, isolated: var/ is a
// temporary folder (OUTBOX_VAR_DIR), the private Redis takes a free port
// (OUTBOX_REDIS_PORT), and scripts/run runs the binary under test
// (OUTBOX_BINARY) without installing or building anything. The private
// Redis and PostgreSQL daemonize, so they are not our children: each is
// stopped by the pid in its pidfile when the test ends, whatever the test
// did.

#include "support/build_paths.hpp"
#include "support/file_checks.hpp"
#include "support/process.hpp"
#include "support/redis_server.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace outbox::test {

class script_fixture : public ::testing::Test {
protected:
  ~script_fixture() override {
    stop_private_redis();
    stop_private_pg();
  }

  /// Runs scripts/`name` with `args` in the temporary folder, under the
  /// isolating environment plus `env` ("NAME=value" items).
  process_result script(const std::string& name,
                        const std::vector<std::string>& args,
                        const std::vector<std::string>& env = {}) {
    std::vector<std::string> command{source_dir() + "/scripts/" + name};
    command.insert(command.end(), args.begin(), args.end());
    return isolated(command, env, 60'000);
  }

  /// Runs `command` in the temporary folder, under the isolating
  /// environment plus `env`, for at most `timeout_ms`.
  process_result isolated(const std::vector<std::string>& command,
                          const std::vector<std::string>& env, int timeout_ms) {
    std::vector<std::string> argv = launcher_;
    argv.insert(argv.end(),
                {"/usr/bin/env", "-u", "OUTBOX_REDIS",
                 "OUTBOX_VAR_DIR=" + var_.string(),
                 "OUTBOX_REDIS_PORT=" + std::to_string(port_),
                 "OUTBOX_BINARY=" + outbox_binary(), "OUTBOX_SKIP_PACKAGES=1"});
    argv.insert(argv.end(), env.begin(), env.end());
    argv.insert(argv.end(), command.begin(), command.end());
    return run_process(argv, tmp_.path().string(), timeout_ms);
  }

  std::filesystem::path redis_dir() const { return var_ / "redis"; }

  /// The pid in the private Redis's pidfile, or -1.
  pid_t recorded_pid() const {
    std::ifstream in{redis_dir() / "redis.pid"};
    long pid = -1;
    return in >> pid ? static_cast<pid_t>(pid) : -1;
  }

  void write_pidfile(pid_t pid) {
    std::filesystem::create_directories(redis_dir());
    std::ofstream{redis_dir() / "redis.pid"} << pid << '\n';
  }

  /// True while `pid` runs (a zombie waiting for its reaper counts as gone).
  static bool running(pid_t pid) {
    if (pid <= 0 || ::kill(pid, 0) != 0)
      return false;
    std::ifstream stat{"/proc/" + std::to_string(pid) + "/stat"};
    std::string text{std::istreambuf_iterator<char>{stat}, {}};
    auto close = text.rfind(')');
    return close == std::string::npos || close + 2 >= text.size() ||
           text[close + 2] != 'Z';
  }

  /// Waits up to `timeout_ms` for `pid` (not necessarily our child) to
  /// end; true once it has. A pidfd turns readable when it terminates.
  static bool ends_within(pid_t pid, int timeout_ms) {
    int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
    if (pidfd < 0)
      return !running(pid);
    pollfd ended{pidfd, POLLIN, 0};
    bool gone = ::poll(&ended, 1, timeout_ms) > 0;
    ::close(pidfd);
    return gone;
  }

  /// SIGTERM to the pidfile's pid, if it still runs; SIGKILL after 10 s.
  /// Never signals the foreign server of a test.
  void stop_private_redis() {
    auto pid = recorded_pid();
    if (pid <= 0 || !running(pid) || pid == foreign_pid_)
      return;
    ::kill(pid, SIGTERM);
    if (!ends_within(pid, 10'000))
      ::kill(pid, SIGKILL);
  }

  /// As root scripts/pg runs the server as postgres, who must get through
  /// the temporary folder to var/pg (mkdtemp makes it 0700).
  void let_postgres_through() {
    if (::geteuid() == 0)
      std::filesystem::permissions(tmp_.path(),
                                   std::filesystem::perms::owner_all |
                                       std::filesystem::perms::group_exec |
                                       std::filesystem::perms::others_exec);
  }

  /// The private PostgreSQL's pidfile (scripts/pg: the server's own).
  std::filesystem::path pg_pidfile() const {
    return var_ / "pg" / "data" / "postmaster.pid";
  }

  /// The pid in the private PostgreSQL's pidfile, or -1.
  pid_t recorded_pg_pid() const {
    std::ifstream in{pg_pidfile()};
    long pid = -1;
    return in >> pid ? static_cast<pid_t>(pid) : -1;
  }

  /// Immediate shutdown (SIGQUIT) of the pidfile's postgres if it still
  /// runs; SIGKILL after 10 s. Never the foreign server of a test.
  void stop_private_pg() {
    auto pid = recorded_pg_pid();
    if (pid <= 0 || !running(pid) || pid == foreign_pid_ ||
        text_of("/proc/" + std::to_string(pid) + "/comm") != "postgres\n")
      return;
    ::kill(pid, SIGQUIT);
    if (!ends_within(pid, 10'000))
      ::kill(pid, SIGKILL);
  }

  temp_dir tmp_{"outbox-scripts"};
  std::filesystem::path var_ = tmp_.path() / "var";
  /// The private Redis's port.
  int port_ = free_loopback_port();
  /// Put before the script's command line, e.g. setpriv to run it as
  /// another user.
  std::vector<std::string> launcher_;
  /// A test's foreign server, never to be signalled by the cleanup.
  pid_t foreign_pid_ = -1;
};

} // namespace outbox::test
