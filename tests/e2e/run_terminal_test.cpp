#include "support/process.hpp"
#include "support/redis_server.hpp"
#include "support/temp_dir.hpp"
#include "support/tmux_pane.hpp"

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
