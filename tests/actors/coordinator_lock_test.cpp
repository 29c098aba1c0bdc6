#include "actors/coordinator.hpp"

#include "tests/actors/pipeline_fixture.hpp"

#include <caf/exit_reason.hpp>
#include <caf/send.hpp>

#include <deque>
#include <string>
#include <vector>

// The consumers' lock on the test coordinator, with a fake pipeline port
// holding the lock and a fake broker: a process whose lock is someone
// else's keeps its consumers stopped (standby) and starts them, after
// recovering what the holder left in flight, once the lock is free; it
// stops them (without counting a restart) when the lock goes to another
// process or the fence refuses them, its recoveries included (each carries
// the acquisition's token); it releases the lock when it stops.

using namespace outbox;
using outbox::test::pipeline_fixture;
using slot_role = actors::worker_slot::role;

namespace {

class ActorCoordinatorLock : public pipeline_fixture {
protected:
  /// A run with one relay and one consumer, as holder "me".
  actors::coordinator_handle spawn_as_me() {
    auto s = pipeline_settings();
    s.run.consumers = 1;
    auto setup = coordinator_config(s);
    setup.consumer_lock_holder = "me";
    check_ms_ = setup.check_interval_ms;
    auto coordinator = spawn_coordinator(setup);
    run();
    return coordinator;
  }

  actors::worker_slot&
  consumer_slot(const actors::coordinator_handle& coordinator) {
    for (auto& slot : coordinator_of(coordinator).slots)
      if (slot.kind == slot_role::consumer)
        return slot;
    throw std::logic_error("no consumer slot");
  }

  int check_ms_ = 0;
};

TEST_F(ActorCoordinatorLock, StandbyUntilTheHolderStopsThenTakesOver) {
  pipeline_->lock_holder = "other";
  auto coordinator = spawn_as_me();
  advance(5 * check_ms_);
  EXPECT_FALSE(consumer_slot(coordinator).running) << "standby";
  EXPECT_FALSE(coordinator_of(coordinator).consuming);
  EXPECT_EQ(pipeline_->recover_all_calls, 0)
      << "the holder's entries are not ours to move";
  EXPECT_EQ(coordinator_of(coordinator).standby_behind, "other");

  pipeline_->lock_holder.clear(); // the holder stopped, or its ttl ran out
  advance(check_ms_);
  EXPECT_EQ(pipeline_->lock_holder, "me#1") << "holder#acquisition";
  EXPECT_TRUE(consumer_slot(coordinator).running);
  EXPECT_TRUE(coordinator_of(coordinator).consuming);
  EXPECT_EQ(pipeline_->recover_all_calls, 1) << "recovered before consuming";

  request_shutdown(coordinator);
  run();
  EXPECT_EQ(pipeline_->lock_holder, "") << "released at the stop";
  EXPECT_GE(pipeline_->lock_releases, 1);
}

TEST_F(ActorCoordinatorLock, LosingTheLockStopsTheConsumersWithoutARestart) {
  auto coordinator = spawn_as_me();
  ASSERT_TRUE(consumer_slot(coordinator).running);
  auto first = worker_of(coordinator, consumer_slot(coordinator));
  auto first_exit = watch(first);
  EXPECT_EQ(consumer_slot(coordinator).name, worker(slot_role::consumer, 0));

  pipeline_->lock_holder = "other"; // our ttl ran out and it took over
  advance(check_ms_);
  EXPECT_TRUE(first_exit->exited);
  EXPECT_FALSE(consumer_slot(coordinator).running);
  EXPECT_TRUE(consumer_slot(coordinator).parked);
  advance(5 * check_ms_);
  EXPECT_FALSE(consumer_slot(coordinator).running) << "not restarted";
  EXPECT_EQ(metrics_->consumer_restarts.load(), 0);

  pipeline_->lock_holder.clear();
  advance(check_ms_);
  EXPECT_EQ(pipeline_->lock_holder, "me#2") << "a new acquisition";
  EXPECT_TRUE(consumer_slot(coordinator).running);
  EXPECT_EQ(consumer_slot(coordinator).name, worker(slot_role::consumer, 1))
      << "a new incarnation, with processing lists of its own";
  EXPECT_EQ(pipeline_->recover_all_calls, 2);
  EXPECT_EQ(metrics_->consumer_restarts.load(), 0);
  request_shutdown(coordinator);
  run();
}

TEST_F(ActorCoordinatorLock, ALapsedLockIsAcquiredAnewNotResumed) {
  auto coordinator = spawn_as_me();
  ASSERT_EQ(pipeline_->lock_holder, "me#1");
  auto first = worker_of(coordinator, consumer_slot(coordinator));
  auto first_exit = watch(first);
  // Frozen past the ttl: another process may have taken the lock, recovered
  // our entries and died; all we see is a lapsed lock.
  pipeline_->lock_holder.clear();
  advance(check_ms_);
  EXPECT_TRUE(first_exit->exited)
      << "the lapsed acquisition's consumers stop first";
  EXPECT_EQ(pipeline_->lock_holder, "")
      << "not taken again while they were still going down";
  advance(check_ms_);
  EXPECT_EQ(pipeline_->lock_holder, "me#2");
  EXPECT_TRUE(consumer_slot(coordinator).running);
  EXPECT_EQ(pipeline_->recover_all_calls, 2)
      << "whatever the other process left in flight goes back first";
  EXPECT_EQ(metrics_->consumer_restarts.load(), 0);
  request_shutdown(coordinator);
  run();
}

TEST_F(ActorCoordinatorLock, AFencedConsumerStopsItsProcessesConsumers) {
  auto coordinator = spawn_as_me();
  ASSERT_TRUE(consumer_slot(coordinator).running);
  // The fence is the first to know: the lock went elsewhere between two
  // checks.
  broker_->fenced = true;
  pipeline_->lock_holder = "other";
  advance(1); // the consumer's next pop, before the coordinator's check
  EXPECT_TRUE(coordinator_of(coordinator).standby_behind.empty())
      << "the coordinator's check has not run yet";
  EXPECT_FALSE(consumer_slot(coordinator).running);
  EXPECT_TRUE(consumer_slot(coordinator).parked);
  EXPECT_FALSE(coordinator_of(coordinator).consuming);
  EXPECT_EQ(metrics_->consumer_restarts.load(), 0) << "fenced is no crash";
  request_shutdown(coordinator);
  run();
}

TEST_F(ActorCoordinatorLock, FrozenInItsRecoveryItIsRefusedAtTheNextList) {
  auto s = pipeline_settings();
  s.run.consumers = 1;
  s.crash.recovery_pause_ms = 3 * s.lease.ttl;
  auto setup = coordinator_config(s);
  setup.consumer_lock_holder = "me";
  check_ms_ = setup.check_interval_ms;
  // Two lists consumers of an earlier process left in flight.
  auto first = pipeline_->names.processing_for(broker_->queue, "gone-a");
  auto second = pipeline_->names.processing_for(broker_->queue, "gone-b");
  broker_->lists[first] = {"a1", "a2"};
  broker_->lists[second] = {"b1"};
  std::vector<storage::millis> froze;
  setup.freeze = [&](storage::millis ms) {
    froze.push_back(ms);
    pipeline_->lock_holder = "other#1"; // our ttl ran out, it took over
  };
  auto coordinator = spawn_coordinator(setup);
  run();
  EXPECT_EQ(froze, std::vector<storage::millis>{3 * s.lease.ttl})
      << "once, between the two lists";
  EXPECT_EQ(pipeline_->recovery_tokens, std::vector<std::string>{"me#1"});
  EXPECT_EQ(metrics_->recovered_entries.load(), 2) << "the first list only";
  EXPECT_TRUE(broker_->lists[first].empty());
  EXPECT_EQ(broker_->lists[second], std::deque<std::string>{"b1"})
      << "the fence refused the list left: it is the new holder's";
  EXPECT_EQ(metrics_->fenced_moves_refused.load(), 1);
  EXPECT_EQ(metrics_->zombie_pauses.load(), 1);
  EXPECT_FALSE(consumer_slot(coordinator).running) << "never started";
  EXPECT_FALSE(coordinator_of(coordinator).consuming);
  advance(check_ms_);
  EXPECT_EQ(coordinator_of(coordinator).standby_behind, "other#1");
  EXPECT_EQ(pipeline_->lock_holder, "other#1") << "not taken back";
  EXPECT_FALSE(consumer_slot(coordinator).running);
  request_shutdown(coordinator);
  run();
}

TEST_F(ActorCoordinatorLock, ARestartsRecoveryCarriesTheFenceToo) {
  auto coordinator = spawn_as_me();
  ASSERT_TRUE(consumer_slot(coordinator).running);
  auto dead = consumer_slot(coordinator).name;
  // The consumer dies while this process, frozen past the ttl, lost the
  // lock: its lists are the new holder's to recover.
  pipeline_->lock_holder = "other#1";
  auto killed = watch(worker_of(coordinator, consumer_slot(coordinator)));
  // A failure, not `kill`: that would take the linked coordinator along.
  caf::anon_send_exit(worker_of(coordinator, consumer_slot(coordinator)),
                      caf::exit_reason::unhandled_exception);
  run();
  ASSERT_TRUE(killed->exited);
  EXPECT_EQ(pipeline_->recovered_consumers, std::vector<std::string>{dead});
  ASSERT_FALSE(pipeline_->recovery_tokens.empty());
  EXPECT_EQ(pipeline_->recovery_tokens.back(), "me#1");
  EXPECT_EQ(metrics_->fenced_moves_refused.load(), 1);
  EXPECT_FALSE(consumer_slot(coordinator).running)
      << "not restarted over lists that are not ours";
  EXPECT_TRUE(consumer_slot(coordinator).parked);
  advance(3 * check_ms_);
  EXPECT_FALSE(consumer_slot(coordinator).running);
  EXPECT_EQ(pipeline_->lock_holder, "other#1");
  request_shutdown(coordinator);
  run();
}

TEST_F(ActorCoordinatorLock, RedisTroubleAtStartDelaysTheConsumersOnly) {
  pipeline_->lock_unreachable = true;
  auto coordinator = spawn_as_me();
  advance(3 * check_ms_);
  EXPECT_FALSE(consumer_slot(coordinator).running);
  for (const auto& slot : coordinator_of(coordinator).slots) {
    if (slot.kind == slot_role::relay) {
      EXPECT_TRUE(slot.running) << "relays do not need the lock";
    }
  }
  pipeline_->lock_unreachable = false;
  advance(check_ms_);
  EXPECT_TRUE(consumer_slot(coordinator).running);
  request_shutdown(coordinator);
  run();
}

} // namespace
