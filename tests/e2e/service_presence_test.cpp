#include "support/command_line.hpp"
#include "support/fast_config.hpp"
#include "support/loopback_listener.hpp"
#include "support/notify_socket.hpp"
#include "support/process.hpp"
#include "support/redis_server.hpp"
#include "support/scrape.hpp"
#include "support/temp_dir.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

// A role as a service manager and an orchestrator see it: READY=1 once it
// runs, WATCHDOG=1 while it does and STOPPING=1 at a SIGTERM, on a real
// NOTIFY_SOCKET; /healthz and /readyz on its metrics listener, /readyz
// failing while Redis is down and coming back with it. The real binary, a
// SQLite file, a private redis-server.

namespace outbox::test {
namespace {

using namespace std::chrono_literals;

class E2EServicePresence : public ::testing::Test {
protected:
  void SetUp() override { std::ofstream{config_} << fast_config({}); }

  void TearDown() override {
    ::unsetenv("NOTIFY_SOCKET");
    ::unsetenv("WATCHDOG_USEC");
  }

  std::vector<std::string> relay_args(std::vector<std::string> flags) const {
    return outbox_command_line("relay", flags, dir_.file("app.db"),
                               redis_.endpoint().to_string(), config_);
  }

  /// The status line and body of GET `path`.
  struct answer {
    std::string status_line;
    std::string body;
  };
  static answer get(int port, const std::string& path) {
    auto response = http_get("127.0.0.1", port, path);
    auto line_end = response.find("\r\n");
    auto body = response.find("\r\n\r\n");
    if (line_end == std::string::npos || body == std::string::npos)
      return {};
    return {response.substr(0, line_end), response.substr(body + 4)};
  }

  /// Asks `path` until its status line holds `status` (bounded).
  static bool answers(int port, const std::string& path,
                      const std::string& status) {
    auto deadline = std::chrono::steady_clock::now() + 30s;
    while (std::chrono::steady_clock::now() < deadline) {
      if (get(port, path).status_line.find(status) != std::string::npos)
        return true;
      std::this_thread::sleep_for(50ms);
    }
    return false;
  }

  temp_dir dir_{"outbox-presence"};
  std::string config_ = dir_.file("relay.json");
  redis_server redis_;
};

TEST_F(E2EServicePresence, TellsTheServiceManagerReadyAliveAndStopping) {
  notify_socket manager{dir_.file("notify.sock")};
  ::setenv("NOTIFY_SOCKET", manager.path().c_str(), 1);
  ::setenv("WATCHDOG_USEC", "300000", 1);
  child_process relay{outbox_argv(relay_args({})), dir_.path().string()};
  ASSERT_EQ(manager.next(30s), "READY=1\nSTATUS=relay running");
  // Fed twice per WatchdogSec while the loop turns.
  EXPECT_TRUE(manager.wait_for("WATCHDOG=1", 5s));
  EXPECT_TRUE(manager.wait_for("WATCHDOG=1", 5s));
  relay.signal(SIGTERM);
  EXPECT_TRUE(manager.wait_for("STOPPING=1", 30s));
  auto r = relay.wait(30'000);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

TEST_F(E2EServicePresence, ReadyzFollowsTheStoresAndHealthzTheProcess) {
  int port = 0;
  {
    auto probe = listen_on_loopback();
    port = probe.port;
    ::close(probe.fd);
  }
  child_process relay{
      outbox_argv(relay_args({"--metrics-port", std::to_string(port)})),
      dir_.path().string()};
  ASSERT_TRUE(answers(port, "/readyz", " 200 ")) << get(port, "/readyz").body;
  auto alive = get(port, "/healthz");
  EXPECT_THAT(alive.status_line, testing::HasSubstr(" 200 "));
  EXPECT_EQ(alive.body, "ok\n");

  redis_.stop();
  ASSERT_TRUE(answers(port, "/readyz", " 503 "));
  EXPECT_THAT(get(port, "/readyz").body,
              testing::HasSubstr("stores out of reach: "));
  // Alive all the same: waiting out an outage is its job.
  EXPECT_THAT(get(port, "/healthz").status_line, testing::HasSubstr(" 200 "));
  redis_.start();
  EXPECT_TRUE(answers(port, "/readyz", " 200 "));
  // The exact paths only.
  EXPECT_THAT(get(port, "/readyzz").status_line, testing::HasSubstr(" 404 "));

  relay.signal(SIGTERM);
  auto r = relay.wait(30'000);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
}

} // namespace
} // namespace outbox::test
