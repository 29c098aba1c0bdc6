// `outbox bench --db postgresql://...`: every stage against PostgreSQL
// ceilings of the same run, relays as processes, on a database of its own.

#include "broker/connection.hpp"
#include "support/pg_server.hpp"
#include "support/process.hpp"
#include "support/redis_server.hpp"
#include "support/sql_probe.hpp"
#include "support/temp_dir.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <hiredis/hiredis.h>
#include <nlohmann/json.hpp>

#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <thread>

namespace outbox {
namespace {

class BenchPostgres : public ::testing::Test {
protected:
  /// `outbox bench --tiny` on `db`, its scratch folder (the relay
  /// processes' config and logs) in the test's folder ($TMPDIR).
  std::vector<std::string> bench_argv(const std::string& db,
                                      std::vector<std::string> flags = {}) {
    std::vector<std::string> argv{"/usr/bin/env",
                                  "TMPDIR=" + dir_.path().string()};
    for (const auto& a :
         test::outbox_argv({"bench", "--tiny", "--db", db, "--redis",
                            redis_.endpoint().to_string()}))
      argv.push_back(a);
    argv.insert(argv.end(), flags.begin(), flags.end());
    return argv;
  }

  test::process_result bench(const std::string& db,
                             std::vector<std::string> flags = {}) {
    return test::run_process(bench_argv(db, std::move(flags)),
                             dir_.path().string(), 240'000);
  }

  /// Processes whose command line names the test's folder: the bench's
  /// relay processes (outbox-bench's hidden pipeline-process command, their
  /// --config in its scratch folder).
  int processes_in_folder() const {
    int found = 0;
    std::error_code ignored;
    for (const auto& entry :
         std::filesystem::directory_iterator{"/proc", ignored}) {
      std::ifstream in{entry.path() / "cmdline"};
      std::string cmdline{std::istreambuf_iterator<char>{in}, {}};
      if (cmdline.find(std::string{"pipeline-process"} + '\0') !=
              std::string::npos &&
          cmdline.find(dir_.path().string()) != std::string::npos)
        ++found;
    }
    return found;
  }

  std::unique_ptr<test::sql_probe> server() const {
    storage::db_options db;
    db.path = pg_.uri("postgres");
    return test::sql_probe::open(test::backend::postgres, db);
  }

  test::pg_server pg_;
  test::redis_server redis_;
  test::temp_dir dir_{"outbox-bench-pg"};
};

TEST_F(BenchPostgres, MeasuresEveryStageOnADatabaseOfItsOwn) {
  // The user's database, with an order of its own: the bench must neither
  // read nor change it.
  auto init = test::run_outbox({"init", "--db", pg_.uri()});
  ASSERT_EQ(init.exit_code, 0) << init.err;
  auto placed = test::run_outbox(
      {"place-order", "--db", pg_.uri(), "--sku", "sku-1", "--qty", "2"});
  ASSERT_EQ(placed.exit_code, 0) << placed.err;
  broker::connection conn{redis_.connection_options()};
  conn.command({"HSET", "pipeline:processed", "e-1", "{}"});

  auto r = bench(pg_.uri(), {"--json"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto report = nlohmann::json::parse(r.out);
  ASSERT_TRUE(report.at("ok").get<bool>()) << report.at("errors").dump();
  EXPECT_THAT(report.at("machine").at("postgres").get<std::string>(),
              testing::StartsWith("15."));
  EXPECT_FALSE(report.at("machine").contains("sqlite"));

  std::map<std::string, nlohmann::json> by_name;
  for (const auto& m : report.at("measurements"))
    by_name[m.at("name").get<std::string>()] = m;
  for (const char* expected : {"postgres_order_txn",
                               "postgres_order_group",
                               "claim_ack_raw",
                               "redis_rpush",
                               "relay_serial",
                               "writer_one_per_txn_PG",
                               "writer_group_PG",
                               "writer_cpu_PG",
                               "relay_1",
                               "relay_2",
                               "relay_4",
                               "relay_1_cores",
                               "relay_4_cores",
                               "relay_1_cores_postgres",
                               "relay_1_cores_redis",
                               "relay_cpu",
                               "consumer_1",
                               "consumer_sink_postgres",
                               "consumer_sink_postgres_cpu",
                               "end_to_end_orders",
                               "cpu_postgres",
                               "claim_history_small",
                               "claim_history_large",
                               "claim_heads_held",
                               "claim_history_held",
                               "trim_records",
                               "trim_postgres_cpu"})
    EXPECT_EQ(by_name.count(expected), 1u) << expected;
  // Not measured on PostgreSQL: SQLite's synchronous levels.
  EXPECT_EQ(by_name.count("sqlite_order_txn_FULL"), 0u);
  EXPECT_EQ(by_name.count("writer_group_NORMAL"), 0u);
  for (const auto& [name, m] : by_name) {
    if (name.rfind("latency_", 0) == 0)
      EXPECT_GE(m.at("value").get<double>(), 0) << name;
    else
      EXPECT_GT(m.at("value").get<double>(), 0) << name;
  }
  // Each relay count's share is of the serial bound measured on
  // PostgreSQL in this run; the writer's of PostgreSQL's order ceiling.
  EXPECT_EQ(by_name.at("relay_1").at("ceiling"), "relay_serial");
  EXPECT_EQ(by_name.at("writer_group_PG").at("ceiling"),
            "postgres_order_group");
  EXPECT_THAT(by_name.at("claim_ack_raw").at("label").get<std::string>(),
              testing::HasSubstr("PostgreSQL"));
  // PostgreSQL's targets are measured; SQLite's say whose they are.
  for (const auto& t : report.at("targets")) {
    auto name = t.at("name").get<std::string>();
    if (name.rfind("pg_", 0) == 0) {
      EXPECT_TRUE(t.at("measured").get<bool>()) << t;
    }
    if (name == "relay_cpu" || name == "writer_cpu" || name == "latency_p99") {
      EXPECT_THAT(t.at("why").get<std::string>(),
                  testing::HasSubstr("SQLite's target"))
          << t;
    }
  }

  // The scratch database is gone, the user's untouched, the bench's keys
  // (the relay processes' keyspace stamp among them) deleted.
  auto probe = server();
  EXPECT_EQ(probe->scalar("SELECT count(*) FROM pg_database WHERE datname "
                          "LIKE 'outbox_bench_%'"),
            0);
  storage::db_options user;
  user.path = pg_.uri();
  auto users = test::sql_probe::open(test::backend::postgres, user);
  EXPECT_EQ(users->scalar("SELECT count(*) FROM outbox"), 1);
  EXPECT_EQ(users->scalar("SELECT count(*) FROM orders"), 1);
  EXPECT_EQ(conn.command({"KEYS", "bench.*"})->elements, 0u);
  EXPECT_EQ(conn.command({"HLEN", "pipeline:processed"})->integer, 1);
  for (const auto& entry : std::filesystem::directory_iterator(dir_.path()))
    ADD_FAILURE() << "left behind: " << entry.path();
}

TEST_F(BenchPostgres, AStopRemovesTheScratchDatabaseKeysAndRelayProcesses) {
  for (int sig : {SIGINT, SIGTERM}) {
    SCOPED_TRACE(sig);
    test::child_process bench{bench_argv(pg_.uri()), dir_.path().string()};
    // Stopped while its relay processes run.
    ASSERT_TRUE(
        bench.wait_for_stderr("bench: relay: 2 relay processes", 120'000));
    bench.signal(sig);
    auto r = bench.wait(60'000);
    EXPECT_EQ(r.exit_code, sig == SIGINT ? 130 : 143) << r.err;
    EXPECT_THAT(r.err, testing::HasSubstr("removing the bench's scratch"));
    auto probe = server();
    EXPECT_EQ(probe->scalar("SELECT count(*) FROM pg_database WHERE datname "
                            "LIKE 'outbox_bench_%'"),
              0);
    // Its relay processes end with it (told by the kernel when their
    // parent went: they are not ours to reap).
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (processes_in_folder() > 0 &&
           std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_EQ(processes_in_folder(), 0);
    broker::connection conn{redis_.connection_options()};
    EXPECT_EQ(conn.command({"KEYS", "bench.*"})->elements, 0u);
    for (const auto& entry : std::filesystem::directory_iterator(dir_.path()))
      ADD_FAILURE() << "left behind: " << entry.path();
  }
}

TEST_F(BenchPostgres, AServerThatCannotBeReachedIsNamedAndExitsOne) {
  auto r = bench("postgresql://outbox:secret@127.0.0.1:1/outbox");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.err, testing::HasSubstr("127.0.0.1:1"));
  EXPECT_THAT(r.err, testing::Not(testing::HasSubstr("secret")));
}

TEST_F(BenchPostgres, ARoleThatMayNotCreateDatabasesIsToldWhatItNeeds) {
  // The session runs as a role without CREATEDB (role=, after logging
  // in as the cluster's superuser): what a service's own role often is.
  server()->exec("CREATE ROLE plain NOLOGIN NOCREATEDB");
  auto r = bench(pg_.uri() + "&options=-c%20role%3Dplain");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.err, testing::HasSubstr("cannot create the bench's scratch "
                                        "database"));
  EXPECT_THAT(r.err, testing::HasSubstr("the role needs CREATEDB"));
}

} // namespace
} // namespace outbox
