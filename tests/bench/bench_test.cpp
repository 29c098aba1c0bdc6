#include "bench/bench.hpp"

#include "bench/results.hpp"
#include "broker/connection.hpp"
#include "support/process.hpp"
#include "support/redis_server.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <filesystem>
#include <set>

namespace outbox::bench {
namespace {

/// Every stage, at a scale that takes seconds: the figures mean nothing
/// here, the test checks that each is measured and that the bench leaves
/// the pipeline's own data alone.
bench_scale tiny() {
  bench_scale s;
  s.orders_one_per_txn = 20;
  s.orders_grouped = 500;
  s.relay_events = 2'000;
  s.consumer_entries = 2'000;
  s.end_to_end_orders = 1'000;
  s.fixed_load_seconds = 1;
  s.history_small = 1'000;
  s.history_large = 5'000;
  s.spread_pending = 2'000;
  s.timed_claims = 3;
  s.stage_timeout_s = 60;
  return s;
}

std::set<std::string> names_of(const nlohmann::json& report) {
  std::set<std::string> names;
  for (const auto& m : report.at("measurements"))
    names.insert(m.at("name").get<std::string>());
  return names;
}

TEST(Bench, MeasuresEveryStageAgainstItsCeilingAndLeavesPipelineDataAlone) {
  test::redis_server redis;
  test::temp_dir dir{"outbox-bench"};
  broker::connection conn{redis.connection_options()};
  // The pipeline's own keys (default names), which the bench must not touch.
  conn.command({"HSET", "processed", "e-1", "{}"});
  conn.command({"RPUSH", "outbox.events.0", "entry"});

  bench_options o;
  o.settings.redis = redis.connection_options();
  o.settings.db.path = dir.file("outbox.db");
  o.scratch_parent = dir.path().string();
  o.scale = tiny();
  auto report = run_bench(o);

  ASSERT_TRUE(report.at("ok").get<bool>()) << report.at("errors").dump();
  auto names = names_of(report);
  for (const char* expected : {"sqlite_order_txn_FULL",
                               "sqlite_order_group_NORMAL",
                               "claim_ack_raw",
                               "redis_rpush",
                               "inbox_script",
                               "relay_serial",
                               "writer_one_per_txn_FULL",
                               "writer_group_NORMAL",
                               "relay_1",
                               "relay_2",
                               "relay_4",
                               "consumer_1",
                               "consumer_2",
                               "end_to_end_orders",
                               "latency_p99",
                               "claim_history_small",
                               "claim_history_large",
                               "claim_many_aggregates",
                               "claim_few_aggregates",
                               "claim_heads_held"})
    EXPECT_EQ(names.count(expected), 1u) << expected;
  for (const auto& m : report.at("measurements")) {
    auto name = m.at("name").get<std::string>();
    if (name.rfind("latency_", 0) == 0)
      EXPECT_GE(m.at("value").get<double>(), 0) << name;
    else
      EXPECT_GT(m.at("value").get<double>(), 0) << name;
    if (m.contains("ceiling")) {
      EXPECT_EQ(names.count(m.at("ceiling").get<std::string>()), 1u) << name;
      EXPECT_GT(m.at("ratio").get<double>(), 0) << name;
    }
  }
  EXPECT_EQ(report.at("targets").size(), 6u);
  EXPECT_FALSE(results_table(report).empty());

  // Scratch folder and bench keys gone; the pipeline's keys untouched.
  for (const auto& entry : std::filesystem::directory_iterator(dir.path()))
    ADD_FAILURE() << "left behind: " << entry.path();
  EXPECT_EQ(conn.command({"KEYS", "bench.*"})->elements, 0u);
  EXPECT_EQ(conn.command({"HLEN", "processed"})->integer, 1);
  EXPECT_EQ(conn.command({"LLEN", "outbox.events.0"})->integer, 1);
}

TEST(BenchCommand, UnreachableRedisIsNamedAndExitsOne) {
  test::temp_dir dir{"outbox-bench-cli"};
  auto r = test::run_outbox(
      {"bench", "--quick", "--db", dir.file("o.db"), "--redis", "127.0.0.1:1"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("127.0.0.1:1"), std::string::npos) << r.err;
}

TEST(BenchCommand, UnknownFlagIsAUsageError) {
  auto r = test::run_outbox({"bench", "--fast"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--fast"), std::string::npos) << r.err;
}

} // namespace
} // namespace outbox::bench
