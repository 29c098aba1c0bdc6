#include "actors/coordinator.hpp"

#include "storage/types.hpp"
#include "tests/actors/pipeline_fixture.hpp"

#include <gmock/gmock.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>
#include <vector>

// The coordinator on the test coordinator (children not detached), with the
// real relay and consumer on the fixture's database and fake broker, and a
// fake pipeline port: restarts under new names, the restart budget, consumer
// recovery before the restart, the end of a bounded run, graceful shutdown.

using namespace outbox;
using outbox::test::has_code;
using outbox::test::pipeline_fixture;
using outbox::test::seed_where;
using slot_role = actors::worker_slot::role;

namespace {

using ActorCoordinator = pipeline_fixture;
using ActorCoordinatorRun = pipeline_fixture;

TEST_F(ActorCoordinator, RestartsACrashedRelayUnderANewName) {
  auto ids = place_orders({"apple", "pear", "plum"}, 1);
  auto first = worker(slot_role::relay, 0);
  auto second = worker(slot_role::relay, 1);
  EXPECT_EQ(second, "relay-" + prefix_ + "-0-1");
  auto s = pipeline_settings();
  // The first incarnation crashes after its claim, the second does not.
  s.crash.relay_after_claim = 0.5;
  s.crash.seed = seed_where(actors::crash_point::relay_after_claim, 0.5,
                            {{first, {true}}, {second, {false}}});
  auto coordinator = spawn_coordinator(coordinator_config(s));
  auto report = request_report(coordinator);
  run();

  EXPECT_EQ(metrics_->injected_crashes.load(), 1);
  EXPECT_EQ(metrics_->relay_restarts.load(), 1);
  auto& slots = coordinator_of(coordinator).slots;
  ASSERT_EQ(slots.size(), 1u);
  EXPECT_EQ(slots[0].name, second);
  EXPECT_EQ(slots[0].restarts, 1);
  EXPECT_TRUE(slots[0].running);
  EXPECT_EQ(pipeline_->recover_all_calls, 0) << "no consumers in this run";
  for (const auto& id : ids) {
    EXPECT_EQ(status_of(id),
              storage::row_status_text(storage::row_status::sending));
    EXPECT_EQ(owner_of(id), first) << "the dead relay's leases stay";
  }

  // The new relay takes the rows over once the dead one's leases expire.
  advance(policy_.ttl + 200);
  for (const auto& id : ids) {
    EXPECT_EQ(status_of(id),
              storage::row_status_text(storage::row_status::published));
    EXPECT_EQ(broker_->times_published(id), 1u);
  }
  EXPECT_EQ(metrics_->lease_takeovers.load(), 3);
  EXPECT_EQ(metrics_->relay_restarts.load(), 1);
  EXPECT_FALSE(report->arrived) << "an unbounded run goes on";

  request_shutdown(coordinator);
  run();
  auto r = report_json(*report);
  EXPECT_TRUE(r["ok"].get<bool>()) << r.dump();
  EXPECT_EQ(r["relay_restarts"], 1);
  EXPECT_EQ(r["injected_crashes"], 1);
}

TEST_F(ActorCoordinator, GivesUpWhenARelayExhaustsItsRestartBudget) {
  auto order = place_order("apple", 1);
  auto s = pipeline_settings();
  s.crash.relay_after_claim = 1; // every incarnation crashes
  s.run.restart_budget = 2;
  auto coordinator = spawn_coordinator(coordinator_config(s));
  auto exit = watch(coordinator);
  auto report = request_report(coordinator);
  run();
  EXPECT_EQ(metrics_->relay_restarts.load(), 1);
  // Each later incarnation claims (and dies) once the last lease expired.
  advance_until([&] { return report->arrived; }, 40);
  ASSERT_TRUE(report->arrived);
  EXPECT_TRUE(exit->exited);
  EXPECT_EQ(metrics_->injected_crashes.load(), 3);
  EXPECT_EQ(metrics_->relay_restarts.load(), 2);
  auto r = report_json(*report);
  EXPECT_FALSE(r["ok"].get<bool>());
  ASSERT_FALSE(r["violations"].empty());
  auto violation = r["violations"][0].get<std::string>();
  EXPECT_THAT(violation, testing::HasSubstr("restart_budget (2)"));
  auto last = worker(slot_role::relay, 2);
  EXPECT_THAT(violation, testing::HasSubstr(last));
  // Gave up, lost nothing: the row waits, leased by the last incarnation.
  EXPECT_EQ(status_of(order.event_id),
            storage::row_status_text(storage::row_status::sending));
  EXPECT_EQ(owner_of(order.event_id), last);
  EXPECT_EQ(attempts_of(order.event_id), 3);
}

TEST_F(ActorCoordinator, RecoversACrashedConsumersEntriesBeforeRestartingIt) {
  place_orders({"apple", "pear", "plum"}, 2);
  auto first = worker(slot_role::consumer, 0);
  auto second = worker(slot_role::consumer, 1);
  auto s = pipeline_settings();
  s.run.consumers = 1;
  // The first incarnation dies after its first effect, the second never.
  s.crash.consumer_after_effect = 0.5;
  s.crash.seed =
      seed_where(actors::crash_point::consumer_after_effect, 0.5,
                 {{first, {true}}, {second, {false, false, false, false}}});
  auto coordinator = spawn_coordinator(coordinator_config(s));
  // What the coordinator's consumer slot looks like while it recovers.
  std::vector<std::pair<std::string, bool>> slot_at_recovery;
  pipeline_->on_recover_consumer = [&](const std::string&) {
    const auto& slot = coordinator_of(coordinator).slots.at(1);
    slot_at_recovery.emplace_back(slot.name, slot.running);
  };
  auto report = request_report(coordinator);
  run();
  advance(50);

  EXPECT_EQ(pipeline_->recover_all_calls, 1) << "at start, before consumers";
  EXPECT_EQ(pipeline_->recovered_consumers, std::vector<std::string>{first});
  EXPECT_EQ(metrics_->consumer_restarts.load(), 1);
  // The whole popped batch was in flight when the consumer crashed.
  EXPECT_EQ(metrics_->recovered_entries.load(), 3);
  // Recovered while the slot was down: the new consumer had not started.
  EXPECT_EQ(slot_at_recovery,
            (std::vector<std::pair<std::string, bool>>{{first, false}}));
  auto& slots = coordinator_of(coordinator).slots;
  ASSERT_EQ(slots.size(), 2u);
  EXPECT_EQ(slots[1].name, second);
  // The dead consumer's entry went back before the new one popped anything.
  auto old_list = pipeline_->names.processing_for(broker_->queue, first);
  auto new_list = pipeline_->names.processing_for(broker_->queue, second);
  const auto& trace = broker_->trace;
  auto recovered = std::find(trace.begin(), trace.end(), "recover " + old_list);
  auto first_pop = std::find(trace.begin(), trace.end(), "pop " + new_list);
  ASSERT_NE(recovered, trace.end());
  ASSERT_NE(first_pop, trace.end());
  EXPECT_LT(recovered, first_pop);
  // Each event took effect once; the recovered one came back as a duplicate.
  EXPECT_EQ(broker_->processed.size(), 3u);
  EXPECT_EQ(broker_->duplicates, 1);
  EXPECT_EQ(broker_->order_violations, 0);
  for (auto sku : {"apple", "pear", "plum"})
    EXPECT_EQ(broker_->reserved[sku], 2) << sku;
  EXPECT_TRUE(broker_->lists[broker_->queue].empty());
  EXPECT_TRUE(broker_->lists[old_list].empty());
  EXPECT_TRUE(broker_->lists[new_list].empty());

  request_shutdown(coordinator);
  run();
  auto r = report_json(*report);
  EXPECT_TRUE(r["ok"].get<bool>()) << r.dump();
  EXPECT_EQ(r["consumer_restarts"], 1);
}

TEST_F(ActorCoordinatorRun, BoundedRunEndsByItselfOnceDrained) {
  auto ids = place_orders({"apple", "pear"}, 1);
  ids.push_back(
      append(place_order("plum", 1).aggregate_id, "OrderPaid").event_id);
  pipeline_->source = [this] { return snapshot_from_stores(); };
  auto s = pipeline_settings();
  s.run.consumers = 1;
  auto coordinator = spawn_coordinator(coordinator_config(s, true));
  auto exit = watch(coordinator);
  auto report = request_report(coordinator);
  advance_until([&] { return report->arrived; }, 20, 10);
  ASSERT_TRUE(report->arrived) << "the run did not end by itself";
  EXPECT_TRUE(exit->exited);
  auto r = report_json(*report);
  EXPECT_TRUE(r["ok"].get<bool>()) << r.dump();
  // It ended because everything drained, not before.
  EXPECT_EQ(r["pending_rows"], 0);
  EXPECT_EQ(r["sending_rows"], 0);
  EXPECT_EQ(r["processed_unique"], 4);
  for (const auto& id : ids)
    EXPECT_EQ(status_of(id),
              storage::row_status_text(storage::row_status::published));
  EXPECT_EQ(broker_->consumed, 4);
  EXPECT_GE(pipeline_->audits, 1);
}

TEST_F(ActorCoordinatorRun, BoundedRunWaitsWhileWorkIsLeft) {
  pipeline_->snapshot.pending = 2;
  auto report = start_run(bounded_config()).report;
  advance(200);
  EXPECT_FALSE(report->arrived) << "rows are still pending";
  pipeline_->snapshot.pending = 0;
  pipeline_->snapshot.trouble = "redis: connection refused";
  advance(200);
  EXPECT_FALSE(report->arrived) << "an unreadable state is not drained";
  pipeline_->snapshot.trouble.clear();
  advance(20);
  EXPECT_TRUE(report_json(*report)["ok"].get<bool>()) << *report->value;
}

// A bounded run reads the stores lightly at each check (whether anything
// is left, whether anything moved); it counts in full only to confirm a
// drain, and once nothing has moved for the stall timeout, to name what it
// waits for. Counting every row costs more than relaying them.
TEST_F(ActorCoordinatorRun, BoundedRunCountsInFullOnlyToConfirmADrainOrAStall) {
  pipeline_->snapshot.pending = 2;
  auto report = start_run(bounded_config()).report;
  advance(100);
  auto full = pipeline_->snapshots;
  auto light = pipeline_->drain_reads;
  // Something moves every 200 ms for 2 s: no full count, a light read at
  // every check.
  for (int step = 0; step < 10; ++step) {
    pipeline_->snapshot.published += 1;
    advance(200);
  }
  EXPECT_FALSE(report->arrived) << "rows are still pending";
  EXPECT_EQ(pipeline_->snapshots, full) << "nothing to confirm yet";
  EXPECT_GE(pipeline_->drain_reads - light, 15) << "every check";
  pipeline_->snapshot.pending = 0;
  advance(20);
  EXPECT_EQ(pipeline_->snapshots, full + 2)
      << "the drain confirmed in full, then the report's own";
  EXPECT_TRUE(report_json(*report)["ok"].get<bool>()) << *report->value;
}

// The change mark alone says the database moved (rows published while
// their counts, read lightly, look the same): the stall clock restarts.
TEST_F(ActorCoordinatorRun, TheDatabasesChangeMarkRestartsTheStallClock) {
  pipeline_->snapshot.pending = 2;
  auto report = start_run(bounded_config()).report;
  // ttl 1000 ms, backoff cap 100 ms, idle poll cap 100 ms: 3.1 s of stillness.
  advance(2500);
  pipeline_->snapshot.database_mark = 1;
  advance(2500);
  EXPECT_FALSE(report->arrived) << "the database moved 2.5 s ago";
  advance(800);
  EXPECT_TRUE(failed_with(*report, "not published"));
}

// Without a change mark (PostgreSQL with track_counts off), the counts say
// whether anything moved: a bounded run counts in full once a second, a run
// whose counts move goes on, and one whose counts stand still ends as
// stalled.
TEST_F(ActorCoordinatorRun, WithoutAChangeMarkTheCountsTellMovement) {
  pipeline_->marked = false;
  pipeline_->snapshot.pending = 2;
  auto report = start_run(bounded_config()).report;
  auto full = pipeline_->snapshots;
  for (int step = 0; step < 10; ++step) {
    pipeline_->snapshot.published += 1;
    advance(500);
  }
  EXPECT_FALSE(report->arrived) << "the counts moved every 500 ms";
  EXPECT_GE(pipeline_->snapshots - full, 4) << "about once a second";
  EXPECT_LE(pipeline_->snapshots - full, 6);
  advance(3500);
  EXPECT_TRUE(failed_with(*report, "not published"))
      << "nothing moved for the stall timeout";
}

// Redis read while a recovery moved entries back: "nothing queued, nothing
// in processing" may have missed one in flight, so it does not end a run.
TEST_F(ActorCoordinatorRun, BoundedRunDoesNotEndOnUnsettledQueues) {
  auto s = pipeline_settings();
  s.run.consumers = 1;
  pipeline_->snapshot.queues_settled = false;
  auto report = start_run(coordinator_config(s, true)).report;
  advance(200);
  EXPECT_FALSE(report->arrived) << "the queues were not read settled";
  pipeline_->snapshot.queues_settled = true;
  advance(20);
  EXPECT_TRUE(report_json(*report)["ok"].get<bool>()) << *report->value;
}

// A relay of this run paused across its lease: another relay may have
// published every row, but the paused one publishes its batch again when it
// wakes. Ending before that would leave the duplicates queued after the
// run (and `outbox verify` would find its queues not drained).
TEST_F(ActorCoordinatorRun, BoundedRunWaitsForABatchItsRelaysHoldPaused) {
  metrics_->paused_batches = 1;
  auto report = start_run(bounded_config()).report;
  advance(200);
  EXPECT_FALSE(report->arrived) << "a relay still holds a paused batch";
  metrics_->paused_batches = 0;
  advance(20);
  EXPECT_TRUE(report_json(*report)["ok"].get<bool>()) << *report->value;
}

TEST_F(ActorCoordinatorRun, ShutdownStopsAnUnboundedRunGracefully) {
  auto s = pipeline_settings();
  s.run.consumers = 1;
  auto coordinator = spawn_coordinator(coordinator_config(s));
  auto exit = watch(coordinator);
  auto report = request_report(coordinator);
  run();
  auto& slots = coordinator_of(coordinator).slots;
  ASSERT_EQ(slots.size(), 2u);
  std::vector<std::shared_ptr<test::exit_record>> children;
  for (const auto& slot : slots)
    children.push_back(watch(worker_of(coordinator, slot)));
  advance(500);
  EXPECT_FALSE(report->arrived);
  for (const auto& child : children)
    EXPECT_FALSE(child->exited);

  request_shutdown(coordinator);
  run();
  for (const auto& child : children) {
    ASSERT_TRUE(child->exited);
    EXPECT_TRUE(has_code(child->reason, caf::exit_reason::user_shutdown))
        << render(child->reason);
  }
  EXPECT_TRUE(exit->exited);
  auto r = report_json(*report);
  EXPECT_TRUE(r["ok"].get<bool>()) << r.dump();
  EXPECT_EQ(metrics_->relay_restarts.load(), 0);
  EXPECT_EQ(metrics_->consumer_restarts.load(), 0);
}

} // namespace
