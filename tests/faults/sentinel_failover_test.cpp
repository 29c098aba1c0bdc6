#include "tests/faults/fault_fixture.hpp"

#include <gmock/gmock.h>

#include <csignal>
#include <functional>
#include <iostream>
#include <thread>

namespace outbox::test {
namespace {

/// Scenarios: Redis under Sentinel (a master, one replica, three sentinels,
/// down-after 1 s) failing over under load, with the relays and the
/// consumers in processes of their own that find the master through the
/// sentinels (a redis-sentinel:// address). With redis.min_replica_acks 1
/// a row is PUBLISHED only once the replica has its push, so a master that
/// dies takes nothing acknowledged with it: nothing lost, no effect twice,
/// order kept, verify passes. Right after a failover the new master has no
/// replica until the old one comes back as one; the relays wait for it
/// meanwhile and charge no row for it.
/// What a relay process says, once per master, when its pushes lack the
/// replicas they need.
const char* const waiting_for_replica =
    "fewer replicas with each push than redis.min_replica_acks asks for: "
    "waiting";

class FaultSentinel : public fault_fixture {
protected:
  FaultSentinel() : fault_fixture(redis_kind::under_sentinel) {}

  void SetUp() override {
    fault_fixture::SetUp();
    require_replica_acks(1);
  }

  /// redis.min_replica_acks, with a lease of 2 s: a failover takes
  /// seconds, and a lease that runs out in a slow (sanitized) relay while
  /// it asks the sentinels is charged like a dead relay's, which these
  /// scenarios do not test.
  void require_replica_acks(int acks) {
    patch_config(
        {{"lease", {{"ttl_ms", 2000}}},
         {"redis",
          {{"min_replica_acks", acks}, {"replica_ack_timeout_ms", 500}}}});
  }

  /// Rows that paid for an outage: FAILED, or charged more than the one
  /// attempt of the claim that published them (a row released uncharged
  /// gets its attempt back).
  std::int64_t charged_rows() const {
    return count("SELECT COUNT(*) FROM outbox WHERE status = 'FAILED' "
                 "OR attempts > 1");
  }

  std::int64_t published() const {
    return count("SELECT COUNT(*) FROM outbox WHERE status = 'PUBLISHED'");
  }

  /// A relay process and a consumer process, both running.
  void start_pipeline() {
    relays_ = start_run({"--relays", "2", "--consumers", "0"});
    consumers_ = start_run({"--relays", "0", "--consumers", "2"});
    ASSERT_TRUE(relays_->wait_for_stderr("running;", 60'000))
        << "the relay process never started: " << relays_->wait(0).err;
    ASSERT_TRUE(consumers_->wait_for_stderr("running;", 60'000))
        << "the consumer process never started: " << consumers_->wait(0).err;
  }

  /// Waits for the load, then for the pipeline to settle; stops both
  /// processes, which must have lived through it all. Returns the relay
  /// process's stderr.
  std::string settle_and_stop(load_waves& load) {
    // A failover is an outage, never a refusal that charges rows.
    return settle_and_stop_survivors(load, *relays_, *consumers_,
                                     "the failover")
        .relays;
  }

  /// Lets the load run until `done` holds (at most 60 s, then fails the
  /// test naming `what`): the failover happens in the sentinels, on their
  /// timers, while the writers go on (a returning old master is demoted
  /// only at a sentinel's next INFO of it: up to 20 s).
  void pump_until(load_waves& load, const std::function<bool()>& done,
                  const std::string& what) {
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!done()) {
      if (std::chrono::steady_clock::now() > until) {
        ADD_FAILURE() << "timed out waiting for " << what;
        return;
      }
      load.pump(50);
    }
  }

  /// At a random moment of the load, `take_down` stops the master; the
  /// sentinels promote the replica; `bring_back` returns the old master
  /// (restarted, or woken: a master by its own account) and the sentinels
  /// make it a replica of the new one. The load goes on throughout.
  void fail_over_around(load_waves& load,
                        const std::function<void(redis_server&)>& take_down,
                        const std::function<void(redis_server&)>& bring_back) {
    const auto window = static_cast<int>(fault_window().count());
    auto& old_master = sentinels_->first_master();
    load.pump(random_ms(window / 8, window / 3));
    take_down(old_master);
    if (::testing::Test::HasFatalFailure())
      return;
    pump_until(
        load,
        [&] {
          return sentinels_->names_master(
              sentinels_->first_replica().endpoint());
        },
        "the sentinels to promote the replica");
    load.pump(random_ms(300, 1500));
    bring_back(old_master);
    pump_until(
        load, [&] { return role_of(old_master.endpoint()) == "slave"; },
        "the old master to come back as a replica");
    load.pump(random_ms(window / 8, window / 4));
  }

  /// The master SIGKILLed, and restarted empty (no persistence).
  void kill_master_and_restart_it(load_waves& load) {
    fail_over_around(
        load, [](redis_server& master) { master.kill(); },
        [](redis_server& master) { master.start(); });
  }

  /// The end of a scenario with min_replica_acks 1: no row charged for
  /// the fault, and finish()'s checks (nothing lost, no effect twice, order
  /// kept, verify passes) with no dead letter.
  void finish_clean(const std::string& scenario) {
    EXPECT_EQ(charged_rows(), 0) << "rows paid attempts for the fault";
    auto check = finish(scenario, 1);
    EXPECT_GT(check.figures.orders, 0);
    EXPECT_EQ(check.figures.dead_lettered, 0);
  }

  std::unique_ptr<child_process> relays_;
  std::unique_ptr<child_process> consumers_;
};

TEST_F(FaultSentinel, AMasterKilledMidRunLosesNothingAcknowledged) {
  ASSERT_NO_FATAL_FAILURE(start_pipeline());
  // Writers all through the failover, whatever it takes.
  auto load = waves(200);
  load.tolerate_redis_outages();
  ASSERT_NO_FATAL_FAILURE(kill_master_and_restart_it(load));
  auto relay_err = settle_and_stop(load);
  EXPECT_THAT(relay_err, testing::HasSubstr("the sentinels name"))
      << "the relays never followed the master";
  // The promoted replica had no replica of its own until the old master
  // came back as one: the relays waited for it.
  EXPECT_THAT(relay_err, testing::HasSubstr(waiting_for_replica));
  finish_clean("FaultSentinel.killed");
}

TEST_F(FaultSentinel, AMasterFrozenPastDownAfterIsPromotedAroundThenWoken) {
  ASSERT_NO_FATAL_FAILURE(start_pipeline());
  auto load = waves(200);
  load.tolerate_redis_outages();
  // Woken, it takes writes as a master (its own view) until the sentinels
  // demote it; nothing written there may count.
  ASSERT_NO_FATAL_FAILURE(fail_over_around(
      load,
      [](redis_server& master) { ASSERT_EQ(::kill(master.pid(), SIGSTOP), 0); },
      [](redis_server& master) {
        ASSERT_EQ(::kill(master.pid(), SIGCONT), 0);
      }));
  settle_and_stop(load);
  finish_clean("FaultSentinel.frozen");
}

/// The replica dies while every push needs it: the relays publish nothing
/// and charge nothing while it is gone, and go on once it is back.
TEST_F(FaultSentinel, RelaysWaitForAReplicaThatDied) {
  ASSERT_NO_FATAL_FAILURE(start_pipeline());
  auto load = waves(200);
  const auto window = static_cast<int>(fault_window().count());
  load.pump(random_ms(window / 8, window / 4));
  auto& replica = sentinels_->first_replica();
  replica.kill();
  pump_until(
      load, [&] { return relays_->wait_for_stderr(waiting_for_replica, 0); },
      "the relays to say what they wait for");
  // Pushes confirmed just before the kill may still be marked: count once
  // the count holds still (bounded), then let the outage outlast many
  // backoffs (a duration is the condition here, not a synchronisation).
  auto before = published();
  for (int look = 0; look < 30; ++look) {
    load.pump(300);
    auto now = published();
    if (now == before)
      break;
    before = now;
  }
  load.pump(1500);
  EXPECT_EQ(published(), before) << "rows were acknowledged unreplicated";
  EXPECT_EQ(charged_rows(), 0) << "rows paid attempts for the outage";
  replica.start();
  load.pump(random_ms(window / 8, window / 4));
  settle_and_stop(load);
  finish_clean("FaultSentinel.replica");
}

/// With redis.min_replica_acks 0 (the default) a push is acknowledged
/// before the replica has it: a master killed in between takes it along.
/// Whatever a run loses, `outbox verify` must name: the test prints what
/// it saw (docs/redis.md quotes it) and fails only if a loss went unreported
/// or an effect happened twice.
TEST_F(FaultSentinel, WithoutReplicaAcksALossIsNamedByVerify) {
  require_replica_acks(0);
  ASSERT_NO_FATAL_FAILURE(start_pipeline());
  auto load = waves(200);
  load.tolerate_redis_outages();
  ASSERT_NO_FATAL_FAILURE(kill_master_and_restart_it(load));
  load.finish(180'000);
  // A lost event is never processed: settle on the relays alone.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(2);
  while (count("SELECT COUNT(*) FROM outbox WHERE status <> 'PUBLISHED'") > 0 &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  wait_until_settled(10'000);
  stop_gracefully(*relays_, "relay process");
  stop_gracefully(*consumers_, "consumer process");

  auto check = check_pipeline(where());
  const auto& f = check.figures;
  std::cout << "[ fault    ] FaultSentinel.no_acks: " << f.outbox_rows
            << " events, " << f.lost << " lost with the master, "
            << f.duplicates << " duplicates absorbed, " << f.order_violations
            << " order violations" << std::endl;
  record_chaos_run("FaultSentinel.no_acks", check, 1, 0);
  EXPECT_EQ(f.orphans, 0);
  auto verify = nlohmann::json::parse(check.verify_output, nullptr, false);
  ASSERT_TRUE(!verify.is_discarded() && verify.contains("checks"))
      << check.verify_output;
  bool verify_failed = false;
  for (const auto& named : verify.at("checks"))
    verify_failed |= named.value("result", "") != "passed";
  EXPECT_EQ(verify_failed, f.lost > 0)
      << f.lost << " events lost; verify said: " << check.verify_output;
  if (f.lost == 0) {
    EXPECT_TRUE(check.ok()) << testing::PrintToString(check.violations);
  }
}

} // namespace
} // namespace outbox::test
