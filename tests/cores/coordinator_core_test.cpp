#include "actors/coordinator_core.hpp"

#include "actors/coordinator_progress.hpp"
#include "metrics/run_metrics.hpp"
#include "tests/actors/fake_pipeline_port.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

// The coordinator's decisions without an actor: what a relay's or
// consumer's down comes to (restart, stop, lose the consumers), when a
// bounded run has drained or stalled, when the progress line is due. No
// CAF here: the core reads the stores through the fake pipeline port, and
// the test plays the shell (it "spawns" by marking slots started).

namespace outbox::test {
namespace {

using down = actors::down_next::what;
using role = actors::worker_slot::role;

class CoordinatorCore : public ::testing::Test {
protected:
  /// A core over the fake pipeline with `relays` relays and `consumers`
  /// consumers, no orders, begun at the test clock's time.
  actors::coordinator_core& begun(int relays, int consumers,
                                  bool until_drained = true) {
    actors::coordinator_setup setup;
    setup.settings.run.relays = relays;
    setup.settings.run.consumers = consumers;
    setup.settings.run.orders = 0;
    setup.settings.run.restart_budget = 1;
    setup.until_drained = until_drained;
    setup.name_prefix = "t";
    setup.make_probe = fake_probe_factory(pipeline_);
    setup.clock = [clock = clock_] { return *clock; };
    setup.metrics = metrics_;
    setup.progress = progress_;
    core_.begin(std::move(setup));
    core_.probe = core_.setup.make_probe();
    core_.plan_slots();
    // No orders: the shell marks the load done at once.
    core_.load_done = true;
    for (auto& slot : core_.slots)
      start(slot);
    return core_;
  }

  /// What the shell does as it spawns a slot's incarnation.
  void start(actors::worker_slot& slot) {
    slot.name =
        actors::worker_name("t", slot.kind, slot.index, slot.incarnation);
    core_.started(slot);
  }

  /// The first slot of a run of `relays` and `consumers` going down for
  /// the first time, with `exit`: what the core says to that.
  actors::down_next first_down(int relays, int consumers,
                               const actors::worker_exit& exit) {
    auto& core = begun(relays, consumers);
    return core.worker_down(core.slots.at(0), exit);
  }

  /// Crashes `slot` and starts its next incarnation, as the core says.
  void crash_and_restart(actors::worker_slot& slot) {
    ASSERT_EQ(core_.worker_down(slot, crash()).next, down::restart);
    ASSERT_EQ(core_.restart(slot).next, actors::restart_next::what::start);
    start(slot);
  }

  static actors::worker_exit crash() {
    return {actors::ec::injected_crash, "outbox: injected_crash"};
  }

  std::shared_ptr<fake_pipeline> pipeline_ = std::make_shared<fake_pipeline>();
  std::shared_ptr<storage::millis> clock_ =
      std::make_shared<storage::millis>(10'000);
  std::shared_ptr<metrics::run_metrics> metrics_ =
      std::make_shared<metrics::run_metrics>();
  std::function<void(const actors::run_progress&)> progress_;
  actors::coordinator_core core_;
};

TEST_F(CoordinatorCore, ACrashWithinTheBudgetRestartsUnderANewName) {
  auto& core = begun(1, 0);
  auto& relay = core.slots.at(0);
  EXPECT_EQ(core.worker_down(relay, crash()).next, down::restart);
  EXPECT_FALSE(relay.running);
  EXPECT_EQ(metrics_->relay_restarts.load(), 1);
  auto plan = core.restart(relay);
  ASSERT_EQ(plan.next, actors::restart_next::what::start);
  EXPECT_EQ(plan.old_name, "relay-t-0-0");
  start(relay);
  EXPECT_EQ(relay.name, "relay-t-0-1");
  EXPECT_EQ(relay.down_reason, "outbox: injected_crash");
}

TEST_F(CoordinatorCore, ASpentRestartBudgetStopsWithTheFailure) {
  auto& core = begun(1, 0);
  auto& relay = core.slots.at(0);
  crash_and_restart(relay);
  auto next = core.worker_down(relay, crash());
  EXPECT_EQ(next.next, down::stop);
  EXPECT_EQ(next.why, "relay-t-0-1 crashed more than run.restart_budget (1) "
                      "times; last: outbox: injected_crash");
}

TEST_F(CoordinatorCore, AFencedConsumerLosesTheConsumers) {
  auto next = first_down(0, 1, {actors::ec::consumer_fenced, "fenced"});
  EXPECT_EQ(next.next, down::lose_consumers);
  EXPECT_EQ(next.why, "the fence refused consumer-t-0-0");
  EXPECT_EQ(metrics_->consumer_restarts.load(), 0) << "not a crash";
}

TEST_F(CoordinatorCore, AFirstStartThatFailedStopsTheRun) {
  auto next = first_down(1, 0, {actors::ec::setup_failed, "no database"});
  EXPECT_EQ(next.next, down::stop);
  EXPECT_EQ(next.why, "cannot start relay-t-0-0: no database");
}

TEST_F(CoordinatorCore, ARestartThatFailsToSetUpIsACrash) {
  auto& core = begun(1, 0);
  auto& relay = core.slots.at(0);
  core.setup.settings.run.restart_budget = 5;
  crash_and_restart(relay);
  EXPECT_EQ(
      core.worker_down(relay, {actors::ec::setup_failed, "no database"}).next,
      down::restart);
}

TEST_F(CoordinatorCore, AConsumerRestartsAfterItsListsAreRecovered) {
  auto& core = begun(0, 1);
  auto& consumer = core.slots.at(0);
  ASSERT_EQ(core.worker_down(consumer, crash()).next, down::restart);
  auto plan = core.restart(consumer);
  EXPECT_EQ(plan.next, actors::restart_next::what::start);
  EXPECT_EQ(pipeline_->recovered_consumers,
            std::vector<std::string>{"consumer-t-0-0"});
}

TEST_F(CoordinatorCore, NothingRestartsOnceTheRunStops) {
  auto& core = begun(1, 0);
  EXPECT_TRUE(core.begin_stop("writer died: x"));
  EXPECT_FALSE(core.begin_stop("later")) << "stops once";
  EXPECT_EQ(core.failure, "writer died: x") << "the first failure stays";
  EXPECT_EQ(core.worker_down(core.slots.at(0), crash()).next, down::nothing);
}

TEST_F(CoordinatorCore, ADrainedBoundedRunStopsWithoutFailure) {
  auto& core = begun(1, 0);
  auto next = core.check();
  EXPECT_EQ(next.next, actors::check_next::what::stop);
  EXPECT_EQ(next.why, "");
  EXPECT_EQ(pipeline_->snapshots, 1) << "a drain is confirmed by a count";
}

TEST_F(CoordinatorCore, WorkLeftKeepsCheckingLightly) {
  pipeline_->snapshot.pending = 5;
  auto& core = begun(1, 0);
  auto next = core.check();
  EXPECT_EQ(next.next, actors::check_next::what::check_later);
  EXPECT_EQ(next.delay_ms, core.setup.check_interval_ms);
  EXPECT_EQ(pipeline_->snapshots, 0) << "read lightly";
  EXPECT_EQ(pipeline_->drain_reads, 1);
}

TEST_F(CoordinatorCore, AStallStopsWithItsReason) {
  pipeline_->snapshot.pending = 5;
  auto& core = begun(1, 0);
  ASSERT_EQ(core.check().next, actors::check_next::what::check_later);
  *clock_ += actors::stall_timeout(core);
  auto next = core.check();
  EXPECT_EQ(next.next, actors::check_next::what::stop);
  EXPECT_EQ(next.why.rfind("stalled: 5 rows PENDING or SENDING are not "
                           "published and nothing moved for ",
                           0),
            0u)
      << next.why;
}

TEST_F(CoordinatorCore, TheProgressLineComesEveryInterval) {
  std::vector<actors::run_progress> lines;
  progress_ = [&lines](const actors::run_progress& p) { lines.push_back(p); };
  pipeline_->snapshot.pending = 5;
  auto& core = begun(1, 0, false);
  core.check();
  EXPECT_TRUE(lines.empty()) << "the first after one interval";
  *clock_ += core.setup.progress_interval_ms;
  EXPECT_EQ(core.check().next, actors::check_next::what::check_later);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].elapsed_ms, core.setup.progress_interval_ms);
  EXPECT_EQ(lines[0].done_label, "published");
}

TEST_F(CoordinatorCore, TheLoadStartsOnceWhenEveryRelayIsReady) {
  auto& core = begun(2, 0);
  EXPECT_FALSE(core.relay_ready());
  EXPECT_TRUE(core.relay_ready());
  EXPECT_FALSE(core.start_load(false)) << "no load generator alive";
  EXPECT_TRUE(core.start_load(true));
  EXPECT_FALSE(core.start_load(true)) << "once";
}

} // namespace
} // namespace outbox::test
