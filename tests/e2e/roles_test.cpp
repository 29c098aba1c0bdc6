#include "broker/connection.hpp"
#include "support/command_line.hpp"
#include "support/fast_config.hpp"
#include "support/pipeline_keys.hpp"
#include "support/process.hpp"
#include "support/redis_server.hpp"
#include "support/temp_dir.hpp"

#include <SQLiteCpp/Database.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <csignal>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

// The roles a deployment runs as services (`outbox write`, `relay`,
// `consume`): each runs its own part from its config file, logs JSON lines
// when told to, and a SIGTERM ends it with exit 0 and that process's own
// figures, whatever the stores hold: the store-wide audit is `verify`'s.
// The real binary, a SQLite file, a private redis-server.

namespace outbox::test {
namespace {

class E2ERoles : public ::testing::Test {
protected:
  void SetUp() override { write_config({}); }

  void write_config(const nlohmann::json& patch) {
    std::ofstream{config_} << fast_config(patch);
  }

  std::vector<std::string> args(const std::string& command,
                                std::vector<std::string> flags) const {
    return outbox_command_line(command, flags, db_,
                               redis_.endpoint().to_string(), config_);
  }

  process_result outbox(const std::string& command,
                        std::vector<std::string> flags = {}) const {
    return run_outbox(args(command, std::move(flags)), dir_.path().string());
  }

  std::int64_t published() const {
    SQLite::Database file{db_, SQLite::OPEN_READONLY};
    return file
        .execAndGet("SELECT COUNT(*) FROM outbox WHERE status = 'PUBLISHED'")
        .getInt64();
  }

  /// Waits (bounded) until `rows` rows are PUBLISHED.
  bool published_at_least(std::int64_t rows) const {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline) {
      if (published() >= rows)
        return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }

  temp_dir dir_{"outbox-roles"};
  std::string config_ = dir_.file("role.json");
  std::string db_ = dir_.file("app.db");
  redis_server redis_;
};

TEST_F(E2ERoles, EachRoleRunsItsPartAndReportsItsOwnFigures) {
  auto write = outbox("write", {"--orders", "40", "--followup-share", "0"});
  ASSERT_EQ(write.exit_code, 0) << write.out << write.err;
  EXPECT_EQ(write.out.rfind("write OK after ", 0), 0u) << write.out;
  EXPECT_THAT(write.out,
              testing::HasSubstr("40 orders placed, 40 events written (0 of "
                                 "them follow-ups): "));
  EXPECT_THAT(write.out, testing::Not(testing::HasSubstr("enqueued")));
  EXPECT_EQ(published(), 0) << "the writer publishes nothing";

  // A relay as a service logs JSON lines and a summary now and then.
  write_config({{"log",
                 {{"level", "info"},
                  {"format", "json"},
                  {"summary_interval_ms", 100}}}});
  child_process relay{outbox_argv(args("relay", {})), dir_.path().string()};
  ASSERT_TRUE(relay.wait_for_stderr("\"msg\":\"summary: ", 30'000));
  ASSERT_TRUE(published_at_least(40));
  relay.signal(SIGTERM);
  auto r = relay.wait(30'000);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.rfind("relay OK after ", 0), 0u) << r.out;
  EXPECT_THAT(r.out, testing::HasSubstr("40 events enqueued by its relays: "));
  EXPECT_THAT(r.out, testing::Not(testing::HasSubstr("orders placed")));
  EXPECT_THAT(r.out, testing::Not(testing::HasSubstr("orders/s")));
  EXPECT_THAT(r.out, testing::HasSubstr("audit: not run"));
  // Every line of its log parses, its own notices included.
  std::istringstream lines{r.err};
  std::string line;
  int stop_notices = 0;
  while (std::getline(lines, line)) {
    auto parsed = nlohmann::json::parse(line, nullptr, false);
    ASSERT_FALSE(parsed.is_discarded()) << "not JSON: " << line;
    ASSERT_TRUE(parsed.contains("level") && parsed.contains("msg")) << line;
    if (parsed.value("logger", "") == "outbox relay" &&
        parsed.value("msg", "").find("SIGTERM: stopping gracefully") !=
            std::string::npos)
      ++stop_notices;
  }
  EXPECT_EQ(stop_notices, 1) << r.err;
}

TEST_F(E2ERoles, AServiceStopExits0WhateverTheStoresHold) {
  ASSERT_EQ(
      outbox("write", {"--orders", "20", "--followup-share", "0"}).exit_code,
      0);
  auto publish = outbox("relay", {"--until-drained"});
  ASSERT_EQ(publish.exit_code, 0) << publish.out << publish.err;
  // Someone else's loss: every queued entry removed by hand.
  auto names = default_pipeline_keys();
  broker::connection redis{redis_.connection_options()};
  for (std::size_t i = 0; i < names.partitions; ++i)
    redis.command({"DEL", names.partition(i)});

  child_process consume{outbox_argv(args("consume", {})), dir_.path().string()};
  ASSERT_TRUE(consume.wait_for_stderr("running; SIGINT or SIGTERM", 30'000));
  consume.signal(SIGTERM);
  auto r = consume.wait(30'000);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out.rfind("consume OK after ", 0), 0u) << r.out;
  EXPECT_THAT(r.out, testing::HasSubstr("audit: not run"));

  // The loss is there, for the audit to name.
  EXPECT_EQ(outbox("verify").exit_code, 1);
  // A bounded run audits, and fails on it.
  auto bounded = outbox("consume", {"--until-drained"});
  EXPECT_EQ(bounded.exit_code, 1) << bounded.out << bounded.err;
  EXPECT_THAT(bounded.out, testing::HasSubstr("VIOLATED: published_processed"));
}

TEST_F(E2ERoles, ARoleWithoutItsOwnPartIsRefused) {
  auto relay = outbox("relay", {"--relays", "0"});
  EXPECT_EQ(relay.exit_code, 2) << relay.err;
  EXPECT_THAT(relay.err, testing::HasSubstr("--relays"));
  EXPECT_THAT(relay.err, testing::HasSubstr("run.relays"));
  auto consume = outbox("consume", {"--consumers", "0"});
  EXPECT_EQ(consume.exit_code, 2) << consume.err;
  EXPECT_THAT(consume.err, testing::HasSubstr("run.consumers"));
  // run.orders is 0 by default: the writer has nothing to do.
  auto write = outbox("write");
  EXPECT_EQ(write.exit_code, 2) << write.err;
  EXPECT_THAT(write.err, testing::HasSubstr("--orders"));
  EXPECT_FALSE(std::ifstream{db_}.good()) << "nothing was created";
}

} // namespace
} // namespace outbox::test
