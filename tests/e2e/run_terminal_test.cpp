#include "support/process.hpp"
#include "support/redis_server.hpp"
#include "support/temp_dir.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

// The progress line in a real terminal: `outbox run` in a tmux pane of 80
// and of 120 columns. A line longer than the pane wraps, and every redraw
// with `\r` then leaves a copy behind; after a run of several refreshes the
// screen must hold one progress line, not a stack.

namespace outbox::test {
namespace {

std::string shell_quoted(const std::string& word) {
  std::string out = "'";
  for (char c : word)
    out += c == '\'' ? std::string{"'\\''"} : std::string(1, c);
  return out + "'";
}

/// A tmux server of its own (socket in a temp dir, no user config) running
/// one command in a pane of the given size. Killed, and its pid reaped or
/// waited for, when the object goes.
class tmux_pane {
public:
  tmux_pane(const std::string& socket, int columns, int rows,
            const std::vector<std::string>& argv)
      : socket_(socket) {
    std::string command;
    for (const auto& word : argv)
      command += shell_quoted(word) + " ";
    // The pane stays open on `read` so the screen can be captured, and
    // tells the test it is done through a tmux channel (an event, not a
    // sleep).
    command +=
        "; echo exit=$?; " + tmux_command() + " wait-for -S done; read x";
    auto started =
        tmux({"new-session", "-d", "-x", std::to_string(columns), "-y",
              std::to_string(rows), "sh -c " + shell_quoted(command)});
    if (started.exit_code != 0)
      throw std::runtime_error("tmux new-session: " + started.err);
    auto pid = tmux({"display-message", "-p", "#{pid}"});
    server_pid_ = std::stoi(pid.out);
  }

  ~tmux_pane() {
    tmux({"kill-server"});
    // Not our child (tmux daemonises): wait for the pid to go, bounded,
    // then SIGKILL that pid.
    for (int i = 0; i < 100 && ::kill(server_pid_, 0) == 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (::kill(server_pid_, 0) == 0)
      ::kill(server_pid_, SIGKILL);
  }

  /// Blocks until the command has ended (bounded by `timeout_ms`).
  bool wait_done(int timeout_ms) {
    return tmux({"wait-for", "done"}, timeout_ms).exit_code == 0;
  }

  /// The rows of the visible screen.
  std::vector<std::string> screen() {
    std::istringstream text{tmux({"capture-pane", "-p"}).out};
    std::vector<std::string> rows;
    for (std::string row; std::getline(text, row);)
      rows.push_back(row);
    return rows;
  }

private:
  std::string tmux_command() const {
    return "/usr/bin/tmux -S " + shell_quoted(socket_);
  }

  process_result tmux(std::vector<std::string> args, int timeout_ms = 20'000) {
    std::vector<std::string> argv{"/usr/bin/tmux", "-S", socket_, "-f",
                                  "/dev/null"};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_process(argv, "", timeout_ms);
  }

  std::string socket_;
  int server_pid_ = 0;
};

class E2ERunTerminal : public ::testing::TestWithParam<int> {
protected:
  void SetUp() override {
    std::ofstream{config_} << R"({
      "db": {"busy_timeout_ms": 500},
      "redis": {"io_timeout_ms": 500},
      "lease": {"ttl_ms": 2000},
      "run": {"poll_interval_ms": 10, "idle_poll_max_ms": 100}
    })";
  }

  temp_dir dir_{"outbox-terminal"};
  std::string config_ = dir_.file("run.json");
  redis_server redis_;
};

TEST_P(E2ERunTerminal, TheScreenHoldsOneProgressLine) {
  int columns = GetParam();
  // About 4 s at the rate asked: several refreshes, one a second.
  auto argv = outbox_argv({"run", "--until-drained", "--relays", "2",
                           "--consumers", "2", "--orders", "2000", "--rate",
                           "500", "--db", dir_.file("app.db"), "--redis",
                           redis_.endpoint().to_string(), "--config", config_});
  tmux_pane pane{dir_.file("tmux.sock"), columns, 60, argv};
  ASSERT_TRUE(pane.wait_done(120'000));
  auto rows = pane.screen();
  std::string all;
  std::vector<std::string> progress;
  for (const auto& row : rows) {
    all += row + "\n";
    // The progress line: "4.0 s | orders 2000/2000 | 0.0 events/s | ..."
    if (row.find(" s | orders ") != std::string::npos)
      progress.push_back(row);
  }
  ASSERT_EQ(progress.size(), 1u) << all;
  EXPECT_THAT(progress[0], testing::HasSubstr("orders 2000/2000")) << all;
  EXPECT_LT(progress[0].size(), static_cast<std::size_t>(columns)) << all;
  EXPECT_THAT(all, testing::HasSubstr("exit=0"));
  EXPECT_THAT(all, testing::HasSubstr("run OK after"));
}

INSTANTIATE_TEST_SUITE_P(Columns, E2ERunTerminal, ::testing::Values(80, 120));

} // namespace
} // namespace outbox::test
