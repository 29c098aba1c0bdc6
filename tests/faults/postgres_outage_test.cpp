// PostgreSQL going away under a running pipeline: the server crashing
// (immediate shutdown) and coming back, and every outbox session killed
// by an administrator. Each is an outage, never a refusal: the same
// `outbox run` process waits it out, reconnects and drains, and no row is
// charged an attempt for it (store_errc::busy, actors/outage.cpp).

#include "support/pg_server.hpp"
#include "tests/faults/fault_world.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <libpq-fe.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <iostream>
#include <memory>
#include <string>
#include <thread>

namespace outbox::test {
namespace {

using json = nlohmann::json;
using steady = std::chrono::steady_clock;

/// Orders the run places itself, while the fault comes.
constexpr int orders = 1500;
/// Published rows that say the pipeline is in full flow: the fault's cue.
constexpr int flowing = 300;
/// Few attempts, so a row charged for the outage twice would end FAILED.
constexpr int max_attempts = 2;
/// Relays in the run, and the rows each claims at once (lease.batch).
constexpr int relays = 2;
constexpr int batch = 64;

class FaultPostgres : public fault_world {
protected:
  void SetUp() override {
    db_path_ = pg_.uri();
    write_config(
        {{"db", {{"busy_timeout_ms", 200}}},
         {"redis", {{"connect_timeout_ms", 500}, {"io_timeout_ms", 250}}},
         {"lease",
          {{"ttl_ms", 500},
           {"batch", batch},
           {"max_attempts", max_attempts},
           {"backoff_base_ms", 10},
           {"backoff_max_ms", 40}}},
         {"run", {{"commit_delay_ms", 2}, {"restart_budget", 1000}}}});
  }

  /// One number from the test's own session, or -1 when the server does not
  /// answer (it may be down or restarting).
  std::int64_t number(const std::string& sql) const {
    std::unique_ptr<PGconn, decltype(&PQfinish)> conn{
        PQconnectdb(pg_.uri().c_str()), &PQfinish};
    if (PQstatus(conn.get()) != CONNECTION_OK)
      return -1;
    std::unique_ptr<PGresult, decltype(&PQclear)> answer{
        PQexec(conn.get(), sql.c_str()), &PQclear};
    if (PQresultStatus(answer.get()) != PGRES_TUPLES_OK ||
        PQntuples(answer.get()) < 1 || PQgetisnull(answer.get(), 0, 0))
      return -1;
    return std::stoll(PQgetvalue(answer.get(), 0, 0));
  }

  /// Waits (bounded, 20 ms steps: each a round trip) until `at_least`
  /// rows are PUBLISHED; false if the run ends or time runs out first.
  bool wait_until_published(child_process& run, std::int64_t at_least) {
    auto deadline = steady::now() + std::chrono::seconds(60);
    while (steady::now() < deadline) {
      if (number("SELECT count(*) FROM outbox WHERE status = 'PUBLISHED'") >=
          at_least)
        return true;
      if (run.exited_within(20))
        return false;
    }
    return false;
  }

  /// `outbox run --until-drained` placing the orders, two relays and two
  /// consumers, in the background.
  std::unique_ptr<child_process> start_run() const {
    auto args =
        with_common({"run", "--until-drained", "--json", "--relays",
                     std::to_string(relays), "--consumers", "2", "--orders",
                     std::to_string(orders), "--seed", "16"},
                    db_path_, config_path_);
    return std::make_unique<child_process>(outbox_argv(args),
                                           dir_.path().string());
  }

  /// The run's end after `faults` faults: it exits 0 with every event
  /// processed once, in order, nothing FAILED or left behind, no row
  /// charged more than the one takeover a fault may cost the rows leased
  /// when it came, and `outbox verify` passes.
  void expect_drained_intact(child_process& run, int faults) {
    auto started = steady::now();
    auto r = run.wait(180'000);
    std::cout << "[ outage   ] drained "
              << std::chrono::duration_cast<std::chrono::milliseconds>(
                     steady::now() - started)
                     .count()
              << " ms after the fault" << std::endl;
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    // The fault hit the run, not a gap between its steps.
    EXPECT_THAT(r.err, testing::HasSubstr("database trouble"));
    auto report = json::parse(r.out);
    EXPECT_TRUE(report.at("ok").get<bool>()) << report.dump(2);
    EXPECT_EQ(report.at("orders"), orders);
    EXPECT_EQ(report.at("processed_unique"), report.at("outbox_rows"));
    EXPECT_EQ(report.at("order_violations"), 0);
    EXPECT_EQ(report.at("failed_rows"), 0) << r.err;
    EXPECT_EQ(report.at("dead_lettered"), 0);
    EXPECT_EQ(report.at("pending_rows"), 0);
    EXPECT_EQ(report.at("sending_rows"), 0);

    EXPECT_EQ(number("SELECT count(*) FROM outbox WHERE status <> 'PUBLISHED'"),
              0);
    // A row published once was charged once. Only rows under a lease when
    // a fault came (at most a batch per relay) can have been charged again:
    // their lease ran out while the database was gone (its clock went on) and
    // another claim took them over, once. Never more, and never the rest.
    EXPECT_LE(number("SELECT max(attempts) FROM outbox"), max_attempts);
    auto charged_twice =
        number("SELECT count(*) FROM outbox WHERE attempts > 1");
    EXPECT_LE(charged_twice, faults * relays * batch);
    std::cout << "[ outage   ] rows taken over after the fault: "
              << charged_twice << " of "
              << number("SELECT count(*) FROM outbox") << std::endl;

    auto verify = outbox({"verify", "--json"});
    EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
    // Kept in a variable: a range-for over parse(...).at(...) would walk a
    // temporary already destroyed.
    auto verified = json::parse(verify.out);
    for (const auto& check : verified.at("checks"))
      EXPECT_EQ(check.at("result"), "passed") << check.dump();
  }

  pg_server pg_;
};

TEST_F(FaultPostgres, ServerCrashMidRunIsWaitedOut) {
  auto run = start_run();
  ASSERT_TRUE(wait_until_published(*run, flowing))
      << "the run never got going: " << run->wait(10'000).err;
  pg_.crash();
  // The outage's length is the fault itself: long past every lease and
  // timeout, so every worker meets it.
  std::this_thread::sleep_for(std::chrono::seconds(3));
  ASSERT_FALSE(run->exited_within(0))
      << "the run gave up during the outage: " << run->wait(0).err;
  pg_.start();
  expect_drained_intact(*run, 1);
}

TEST_F(FaultPostgres, TerminatedSessionsReconnect) {
  auto run = start_run();
  ASSERT_TRUE(wait_until_published(*run, flowing))
      << "the run never got going: " << run->wait(10'000).err;
  // The backend names its sessions application_name=outbox; ours is libpq's
  // default, so the test's own session survives.
  auto ended = number("SELECT count(pg_terminate_backend(pid)) FROM "
                      "pg_stat_activity WHERE application_name = 'outbox'");
  EXPECT_GE(ended, 4) << "writer, relays and consumers each hold a session";
  // Once more, later in the run, at whichever sessions it reopened.
  if (wait_until_published(*run, 3 * flowing))
    number("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
           "WHERE application_name = 'outbox'");
  expect_drained_intact(*run, 2);
}

} // namespace
} // namespace outbox::test
