#include "support/command_line.hpp"
#include "support/fast_config.hpp"
#include "support/process.hpp"
#include "support/redis_server.hpp"
#include "support/temp_dir.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <csignal>
#include <fstream>
#include <string>
#include <vector>

// A bounded run stopped by SIGINT or SIGTERM says it was interrupted and
// what it left undone, with its own exit code; a bounded run that can never
// drain (no relay anywhere) says so and ends; an injected relay pause is
// logged. The real binary, a real SQLite file, a private redis-server.

namespace outbox::test {
namespace {

class E2ERunInterrupt : public ::testing::Test {
protected:
  void SetUp() override {
    // Stderr is not a terminal: no progress line, a summary at info.
    std::ofstream{config_} << fast_config(
        {{"lease", {{"backoff_max_ms", 200}}},
         {"log", {{"level", "info"}, {"summary_interval_ms", 100}}}});
  }

  std::vector<std::string> args(std::vector<std::string> flags) const {
    return outbox_command_line("run", flags, dir_.file("app.db"),
                               redis_.endpoint().to_string(), config_);
  }

  static std::size_t count(const std::string& text, const std::string& part) {
    std::size_t n = 0;
    for (auto at = text.find(part); at != std::string::npos;
         at = text.find(part, at + part.size()))
      ++n;
    return n;
  }

  temp_dir dir_{"outbox-interrupt"};
  std::string config_ = dir_.file("run.json");
  redis_server redis_;
};

TEST_F(E2ERunInterrupt, SigintSaysInterruptedAndWhatWasLeftUndone) {
  // Far more orders than it can place before the signal.
  child_process run{
      outbox_argv(args({"--until-drained", "--relays", "1", "--consumers", "1",
                        "--orders", "100000", "--rate", "200"})),
      dir_.path().string()};
  ASSERT_TRUE(run.wait_for_stderr("summary: ", 30'000));
  run.signal(SIGINT);
  auto r = run.wait(60'000);
  EXPECT_EQ(r.exit_code, 130) << r.out << r.err;
  EXPECT_EQ(count(r.err, "stopping gracefully"), 1u) << r.err;
  EXPECT_THAT(r.err, testing::Not(testing::HasSubstr("invariants violated")));
  EXPECT_THAT(r.err, testing::HasSubstr(
                         "outbox run: SIGINT: interrupted before the run "
                         "drained; left undone: "));
  EXPECT_THAT(r.err, testing::HasSubstr(" of 100000 orders not placed"));
  EXPECT_EQ(r.out.rfind("run INTERRUPTED after ", 0), 0u) << r.out;
  EXPECT_THAT(r.out, testing::HasSubstr("audit: "));
  EXPECT_THAT(r.out, testing::HasSubstr("left undone: "));
}

TEST_F(E2ERunInterrupt, SigtermExits143WithTheUndoneInTheReport) {
  child_process run{outbox_argv(args({"--until-drained", "--json", "--relays",
                                      "0", "--consumers", "0", "--orders",
                                      "100000", "--rate", "100"})),
                    dir_.path().string()};
  ASSERT_TRUE(run.wait_for_stderr("summary: ", 30'000));
  run.signal(SIGTERM);
  auto r = run.wait(60'000);
  EXPECT_EQ(r.exit_code, 143) << r.out << r.err;
  auto report = nlohmann::json::parse(r.out);
  EXPECT_TRUE(report.at("ok").get<bool>()) << r.out;
  EXPECT_TRUE(report.at("interrupted").get<bool>()) << r.out;
  auto undone = report.at("left_undone");
  EXPECT_GT(undone.at("orders_not_placed").get<int>(), 0) << r.out;
  // A writer-only process leaves publishing to relays elsewhere.
  EXPECT_FALSE(undone.contains("rows_not_published")) << r.out;
}

TEST_F(E2ERunInterrupt, AConsumerOnlyRunOverPendingRowsNamesWhyAndEnds) {
  auto load = run_outbox(args({"--until-drained", "--relays", "0",
                               "--consumers", "0", "--orders", "30"}),
                         dir_.path().string());
  ASSERT_EQ(load.exit_code, 0) << load.err;
  auto r =
      run_outbox(args({"--until-drained", "--relays", "0", "--consumers", "1"}),
                 dir_.path().string(), 60'000);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.err,
              testing::HasSubstr("PENDING rows but no relay in this process"));
  EXPECT_THAT(r.err, testing::HasSubstr(
                         "no relay runs in this process to publish them"));
}

TEST_F(E2ERunInterrupt, AnInjectedRelayPauseIsLoggedAtInfo) {
  auto load = run_outbox(args({"--until-drained", "--relays", "0",
                               "--consumers", "0", "--orders", "20"}),
                         dir_.path().string());
  ASSERT_EQ(load.exit_code, 0) << load.err;
  child_process run{
      outbox_argv(args({"--relays", "1", "--consumers", "0",
                        "--crash-relay-pause", "1", "--log-level", "info"})),
      dir_.path().string()};
  ASSERT_TRUE(run.wait_for_stderr("injected pause", 30'000));
  run.signal(SIGTERM);
  auto r = run.wait(30'000);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // Which relay, how long, what it holds.
  EXPECT_THAT(r.err, testing::HasSubstr(
                         ": injected pause (crash.relay_pause): frozen for 600 "
                         "ms, past its 400 ms lease, holding "));
  EXPECT_THAT(r.err, testing::HasSubstr("relay relay-"));
}

} // namespace
} // namespace outbox::test
