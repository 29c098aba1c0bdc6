#include "support/fast_config.hpp"
#include "support/pg_server.hpp"
#include "support/process.hpp"
#include "support/redis_lists.hpp"
#include "support/redis_server.hpp"
#include "support/storage_backend.hpp"
#include "support/temp_dir.hpp"
#include "text/event_headers.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <csignal>
#include <fstream>
#include <map>
#include <memory>
#include <set>

namespace outbox::test {
namespace {

/// `outbox run` as a user runs it: real threads, a real database (a SQLite
/// file, or a private PostgreSQL cluster), a private redis-server. Short
/// leases so crashed relays are taken over fast.
class run_world : public ::testing::Test {
protected:
  /// The cluster is started here, in the test's own thread, which outlives
  /// it (pg_server.hpp: PR_SET_PDEATHSIG is per thread).
  explicit run_world(backend db)
      : pg_(db == backend::postgres ? std::make_unique<pg_server>() : nullptr) {
  }

  void SetUp() override {
    std::ofstream{config_} << fast_config({{"lease", {{"max_attempts", 50}}}});
  }

  std::string db() const { return pg_ ? pg_->uri() : dir_.file("app.db"); }

  std::vector<std::string> common() const {
    return {"--db",     db(),   "--redis", redis_.endpoint().to_string(),
            "--config", config_};
  }

  std::vector<std::string> run_args(std::vector<std::string> flags) const {
    std::vector<std::string> args{"run", "--until-drained", "--json"};
    args.insert(args.end(), flags.begin(), flags.end());
    auto c = common();
    args.insert(args.end(), c.begin(), c.end());
    return args;
  }

  static nlohmann::json report_of(const process_result& r) {
    return nlohmann::json::parse(r.out);
  }

  /// `outbox verify` exits 0 and every check passes; with `queued_ok`, a
  /// check skipped because entries are still queued (a run without
  /// consumers) is fine too.
  void expect_verify_passes(bool queued_ok = false) {
    auto args = common();
    args.insert(args.begin(), {"verify", "--json"});
    auto verify = run_outbox(args, dir_.path().string());
    EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
    auto v = nlohmann::json::parse(verify.out);
    for (const auto& check : v.at("checks")) {
      if (!(queued_ok && check.at("result") == "skipped")) {
        EXPECT_EQ(check.at("result"), "passed") << check.dump();
      }
    }
  }

  temp_dir dir_{"outbox-run"};
  std::string config_ = dir_.file("run.json");
  redis_server redis_;
  std::unique_ptr<pg_server> pg_;
};

/// The tests whose assertions hold on either database, run on both.
class E2ERun : public run_world, public ::testing::WithParamInterface<backend> {
protected:
  E2ERun() : run_world(GetParam()) {}
};

/// The tests of things only the SQLite file has (its descriptor limit) or
/// that never reach the database (flag parsing, an unreachable Redis).
class E2ERunSQLite : public run_world {
protected:
  E2ERunSQLite() : run_world(backend::sqlite) {}
};

INSTANTIATE_TEST_SUITE_P(Backends, E2ERun,
                         ::testing::Values(backend::sqlite, backend::postgres),
                         backend_name);

TEST_P(E2ERun, CrashesEverywhereLoseNothing) {
  auto r = run_outbox(
      run_args({"--relays", "3", "--consumers", "2", "--orders", "3000",
                "--seed", "7", "--crash-relay-after-claim", "0.03",
                "--crash-relay-after-publish", "0.05", "--crash-relay-pause",
                "0.03", "--crash-consumer-after-pop", "0.005",
                "--crash-consumer-after-effect", "0.01"}),
      dir_.path().string(), 240'000);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto report = report_of(r);
  EXPECT_TRUE(report.at("ok").get<bool>()) << report.dump(2);
  EXPECT_EQ(report.at("orders"), 3000);
  EXPECT_EQ(report.at("processed_unique"), report.at("outbox_rows"));
  EXPECT_GT(report.at("outbox_rows").get<int>(), 3000); // follow-ups too
  EXPECT_GT(report.at("duplicates_absorbed").get<int>(), 0);
  EXPECT_GT(report.at("relay_restarts").get<int>(), 0);
  EXPECT_GT(report.at("consumer_restarts").get<int>(), 0);
  EXPECT_GT(report.at("lease_takeovers").get<int>(), 0);
  EXPECT_EQ(report.at("order_violations"), 0);
  EXPECT_EQ(report.at("failed_rows"), 0);
  EXPECT_GE(report.at("enqueued").get<int>(),
            report.at("processed_unique").get<int>());
  expect_verify_passes();
}

TEST_P(E2ERun, ProcessesShareOneDatabase) {
  // Orders first, from a writer-only process.
  auto load = run_outbox(
      run_args({"--relays", "0", "--consumers", "0", "--orders", "1500"}),
      dir_.path().string(), 120'000);
  ASSERT_EQ(load.exit_code, 0) << load.out << load.err;
  EXPECT_EQ(report_of(load).at("pending_rows"),
            report_of(load).at("outbox_rows"));

  // Two relay-only processes race for the same rows; one consumer process.
  auto relay_args = run_args({"--relays", "2", "--consumers", "0",
                              "--crash-relay-after-publish", "0.05"});
  child_process relays_a{outbox_argv(relay_args), dir_.path().string()};
  child_process relays_b{outbox_argv(relay_args), dir_.path().string()};
  child_process consumers{
      outbox_argv(run_args({"--relays", "0", "--consumers", "2"})),
      dir_.path().string()};
  for (auto* child : {&relays_a, &relays_b, &consumers}) {
    auto r = child->wait(180'000);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_TRUE(report_of(r).at("ok").get<bool>()) << r.out;
  }
  expect_verify_passes();
}

TEST_P(E2ERun, SigtermStopsGracefullyAndReleasesLeases) {
  auto load = run_outbox(
      run_args({"--relays", "0", "--consumers", "0", "--orders", "200"}),
      dir_.path().string(), 60'000);
  ASSERT_EQ(load.exit_code, 0) << load.err;
  // Every claim freezes (zombie pause), so the relays sit on leases.
  std::vector<std::string> args{
      "run", "--relays", "2", "--consumers", "0", "--crash-relay-pause",
      "1",   "--json"};
  auto c = common();
  args.insert(args.end(), c.begin(), c.end());
  child_process run{outbox_argv(args), dir_.path().string()};
  ASSERT_TRUE(run.wait_for_stderr("SIGTERM stops it", 30'000));
  auto status_args = common();
  status_args.insert(status_args.begin(), {"status", "--json"});
  auto sending = [&] {
    auto status = run_outbox(status_args, dir_.path().string());
    return nlohmann::json::parse(status.out)
        .at("outbox")
        .at("by_status")
        .at("SENDING")
        .get<int>();
  };
  bool leased = false;
  for (int attempt = 0; attempt < 200 && !leased; ++attempt)
    leased = sending() > 0; // each status call is a round trip: bounded
  ASSERT_TRUE(leased);
  run.signal(SIGTERM);
  auto r = run.wait(30'000);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(report_of(r).at("ok").get<bool>()) << r.out;
  // Released, not left to expire: nothing is SENDING the moment it is gone.
  EXPECT_EQ(sending(), 0);
}

TEST_F(E2ERunSQLite, BadRunFlagsExit2) {
  for (auto flags :
       std::vector<std::vector<std::string>>{{"--relays", "-1"},
                                             {"--crash-relay-pause", "1.5"},
                                             {"--orders", "many"},
                                             {"--partitions", "0"}}) {
    auto r = run_outbox(run_args(flags), dir_.path().string());
    EXPECT_EQ(r.exit_code, 2) << flags[0] << ": " << r.err;
    EXPECT_FALSE(r.err.empty());
  }
}

TEST_F(E2ERunSQLite, UnreachableRedisExits1) {
  auto port = redis_.endpoint().port;
  redis_.stop();
  auto r = run_outbox(run_args({"--relays", "1", "--orders", "10"}),
                      dir_.path().string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(std::to_string(port)), std::string::npos) << r.err;
}

// W3C trace context through `outbox run`: each order's OrderPlaced starts
// a trace, and its follow-ups (OrderPaid, OrderShipped) are other spans of
// that trace, as the queue entries the relays publish carry them.
TEST_P(E2ERun, AnOrdersFollowUpsAreSpansOfItsTrace) {
  auto run = run_outbox(run_args({"--relays", "1", "--consumers", "0",
                                  "--orders", "20", "--followup-share", "1"}),
                        dir_.path().string());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  broker::connection conn{redis_.connection_options()};
  std::map<std::string, std::set<std::string>> traces, spans;
  std::size_t entries = 0;
  for (int partition = 0; partition < 4; ++partition) {
    for (const auto& text : list_items(conn, "pipeline:outbox.events." +
                                                 std::to_string(partition))) {
      auto entry = nlohmann::json::parse(text);
      auto traceparent =
          entry.at("headers").at("traceparent").get<std::string>();
      ASSERT_TRUE(text::is_traceparent(traceparent)) << traceparent;
      auto aggregate = entry.at("aggregate_id").get<std::string>();
      traces[aggregate].insert(traceparent.substr(3, 32));
      spans[aggregate].insert(traceparent.substr(36, 16));
      ++entries;
    }
  }
  ASSERT_EQ(entries, 60u) << "three events of 20 orders";
  ASSERT_EQ(traces.size(), 20u);
  std::set<std::string> distinct;
  for (const auto& [aggregate, ids] : traces) {
    EXPECT_EQ(ids.size(), 1u) << aggregate << ": one trace";
    EXPECT_EQ(spans[aggregate].size(), 3u) << aggregate << ": three spans";
    distinct.insert(*ids.begin());
  }
  EXPECT_EQ(distinct.size(), 20u) << "a trace of its own per order";
}

TEST_P(E2ERun, VerifyStillHoldsAfterAPurgeOfPublishedHistory) {
  auto run = run_outbox(run_args({"--relays", "1", "--consumers", "1",
                                  "--orders", "300", "--followup-share", "1"}),
                        dir_.path().string());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  auto args = common();
  args.insert(args.begin(), {"purge", "--published-older-than", "0s", "--batch",
                             "100", "--json"});
  auto purge = run_outbox(args, dir_.path().string());
  ASSERT_EQ(purge.exit_code, 0) << purge.err;
  auto purged = nlohmann::json::parse(purge.out);
  // Three events per order, all published: every row goes, and each
  // order's last seq is kept in aggregate_heads.
  EXPECT_EQ(purged.at("deleted"), 900) << purge.out;
  EXPECT_EQ(purged.at("aggregate_heads"), 300) << purge.out;
  expect_verify_passes();
}

TEST_F(E2ERunSQLite, AWorkerThatCannotSetItselfUpStopsTheRun) {
  // Few open files: the first relays get their database connections, a
  // later one finds no descriptor left and cannot start. Restarting it
  // would fail alike: the run stops, promptly, with exit 1.
  auto outbox = outbox_argv(
      run_args({"--relays", "64", "--consumers", "0", "--orders", "50"}));
  std::vector<std::string> argv{"/usr/bin/prlimit", "--nofile=64:64", "--"};
  argv.insert(argv.end(), outbox.begin(), outbox.end());
  auto start = std::chrono::steady_clock::now();
  auto r = run_process(argv, dir_.path().string(), 60'000);
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  // Sanitized, the runtime may be what finds no descriptor left first:
  // UBSan opens its suppressions file only at its first (suppressed)
  // report, an actor's spawn, and then ends the process alike.
  // Or it could not open that file at all, and a report it would have
  // suppressed (CAF's, scripts/ubsan.supp) ends the process instead.
  bool runtime_ran_out =
      r.err.find("failed to read suppressions file") != std::string::npos ||
      (r.err.find("runtime error:") != std::string::npos &&
       r.err.find("libcaf_core") != std::string::npos);
  // Which worker finds no descriptor left depends on the order the
  // detached actors open their connections in: a relay or the writer.
  if (!runtime_ran_out) {
    EXPECT_THAT(r.err,
                testing::AnyOf(testing::HasSubstr("cannot start relay-"),
                               testing::HasSubstr("cannot start writer")));
  }
  EXPECT_LT(took, std::chrono::seconds(20));
  // What the run committed before it stopped is whole. Relays that started
  // may have pushed events before the stop, and with no consumers they stay
  // queued: verify then skips comparing published with processed.
  expect_verify_passes(true);
}

} // namespace
} // namespace outbox::test
