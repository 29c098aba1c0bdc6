#include "actors/coordinator.hpp"
#include "metrics/run_report.hpp"

#include "pipeline_fixture.hpp"

#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <vector>

// A bounded run that can never drain (rows behind FAILED rows, queues the
// consumers cannot get through, rows nobody publishes) must end (exit 1
// with a named violation) once nothing has moved for longer than any
// backoff or takeover, not hang; a run waiting out an outage is not stuck.

using namespace outbox;
using outbox::test::pipeline_fixture;

namespace {

using ActorCoordinatorStall = pipeline_fixture;

TEST_F(ActorCoordinatorStall, BoundedRunEndsWhenFailedRowsBlockTheRest) {
  pipeline_->snapshot.failed = 1;
  pipeline_->snapshot.pending = 2;
  auto coordinator =
      spawn_coordinator(coordinator_config(pipeline_settings(), true));
  auto report = request_report(coordinator);
  run();
  // ttl 1000 ms, backoff cap 100 ms, idle poll cap 100 ms: 3.1 s of stillness.
  advance(3000);
  EXPECT_FALSE(report->arrived) << "still within the stall timeout";
  advance(300);
  ASSERT_TRUE(report->value) << render(report->error);
  auto r = nlohmann::json::parse(*report->value);
  EXPECT_FALSE(r["ok"].get<bool>());
  EXPECT_NE(r["violations"].dump().find("FAILED rows block 2"),
            std::string::npos)
      << r["violations"].dump();
}

TEST_F(ActorCoordinatorStall, MovementRestartsTheStallClock) {
  pipeline_->snapshot.failed = 1;
  pipeline_->snapshot.pending = 3;
  auto coordinator =
      spawn_coordinator(coordinator_config(pipeline_settings(), true));
  auto report = request_report(coordinator);
  run();
  advance(2500);
  pipeline_->snapshot.pending = 2; // a row moved on
  pipeline_->snapshot.published = 1;
  advance(2500);
  EXPECT_FALSE(report->arrived) << "something moved 2.5 s ago";
  pipeline_->snapshot.pending = 0; // drained but for the FAILED row
  advance(200);
  ASSERT_TRUE(report->value) << render(report->error);
  EXPECT_TRUE(nlohmann::json::parse(*report->value)["ok"].get<bool>());
}

TEST_F(ActorCoordinatorStall, BoundedRunEndsWhenItsQueuesStopMoving) {
  auto settings = pipeline_settings();
  settings.run.relays = 0;
  settings.run.consumers = 1;
  pipeline_->snapshot.queued = 5;
  pipeline_->snapshot.in_processing = 1;
  auto coordinator = spawn_coordinator(coordinator_config(settings, true));
  auto report = request_report(coordinator);
  run();
  advance(3000);
  EXPECT_FALSE(report->arrived) << "still within the stall timeout";
  advance(300);
  ASSERT_TRUE(report->value) << render(report->error);
  auto r = nlohmann::json::parse(*report->value);
  EXPECT_FALSE(r["ok"].get<bool>());
  EXPECT_NE(r["violations"].dump().find(
                "5 entries queued and 1 in processing lists are not consumed"),
            std::string::npos)
      << r["violations"].dump();
}

TEST_F(ActorCoordinatorStall, AnOutageIsWaitedOutNotAStall) {
  pipeline_->snapshot.pending = 2;
  auto coordinator =
      spawn_coordinator(coordinator_config(pipeline_settings(), true));
  auto report = request_report(coordinator);
  run();
  // Relays meet a read-only Redis and retry: counts stand still, the
  // outage retries do not.
  for (int second = 0; second < 6; ++second) {
    metrics_->outage_retries++;
    advance(1000);
  }
  EXPECT_FALSE(report->arrived) << "an outage is not a stall";
  // Writes go through again and the rows drain.
  pipeline_->snapshot.pending = 0;
  pipeline_->snapshot.published = 2;
  advance(200);
  ASSERT_TRUE(report->value) << render(report->error);
  EXPECT_TRUE(nlohmann::json::parse(*report->value)["ok"].get<bool>());
}

TEST_F(ActorCoordinatorStall, RowsNobodyPublishesEndABoundedRun) {
  pipeline_->snapshot.pending = 2;
  auto coordinator =
      spawn_coordinator(coordinator_config(pipeline_settings(), true));
  auto report = request_report(coordinator);
  run();
  advance(3300);
  ASSERT_TRUE(report->value) << render(report->error);
  EXPECT_NE(nlohmann::json::parse(*report->value)["violations"].dump().find(
                "2 rows PENDING or SENDING are not published"),
            std::string::npos);
}

TEST_F(ActorCoordinatorStall, AConsumerOnlyRunSaysNoRelayPublishesAndEnds) {
  auto settings = pipeline_settings();
  settings.run.relays = 0;
  settings.run.consumers = 1;
  pipeline_->snapshot.pending = 40;
  auto setup = coordinator_config(settings, true);
  auto lines = std::make_shared<std::vector<std::string>>();
  setup.progress = [lines](const actors::run_progress& p) {
    lines->push_back(actors::progress_text(p, 80));
  };
  auto coordinator = spawn_coordinator(setup);
  auto report = request_report(coordinator);
  run();
  advance(2500);
  ASSERT_FALSE(lines->empty());
  EXPECT_NE(lines->back().find("40 PENDING rows but no relay in this process"),
            std::string::npos)
      << lines->back();
  EXPECT_NE(lines->back().find("the run ends in"), std::string::npos)
      << lines->back();
  advance(800);
  ASSERT_TRUE(report->value) << render(report->error);
  auto r = nlohmann::json::parse(*report->value);
  EXPECT_FALSE(r["ok"].get<bool>());
  EXPECT_NE(r["violations"].dump().find("no relay runs in this process"),
            std::string::npos)
      << r["violations"].dump();
}

TEST_F(ActorCoordinatorStall, TheLineNamesLeasesOfADeadRelayAndTheirExpiry) {
  pipeline_->snapshot.pending = 10;
  pipeline_->snapshot.sending = 256;
  auto setup = coordinator_config(pipeline_settings(), true);
  std::string last;
  setup.progress = [&last](const actors::run_progress& p) {
    last = actors::progress_text(p, 0);
  };
  auto coordinator = spawn_coordinator(setup);
  auto report = request_report(coordinator);
  run();
  // A relay of this process that is gone (an earlier incarnation).
  pipeline_->snapshot.leases.push_back(metrics::lease_holding{
      actors::worker_name(prefix_, actors::worker_slot::role::relay, 0, 7), 256,
      now() + 9000});
  advance(2100);
  EXPECT_NE(last.find("waiting for 256 leases of a dead relay, expire in 7 s"),
            std::string::npos)
      << last;
  advance(1300); // past the stall timeout: the run ends
  ASSERT_TRUE(report->value) << render(report->error);
}

TEST_F(ActorCoordinatorStall, RowsLeftUnderADeadRelaysLeaseAreNamedAtTheEnd) {
  pipeline_->snapshot.failed = 1;
  pipeline_->snapshot.sending = 256;
  pipeline_->snapshot.leases.push_back(metrics::lease_holding{
      actors::worker_name(prefix_, actors::worker_slot::role::relay, 0, 3), 256,
      now() + 60'000});
  auto coordinator =
      spawn_coordinator(coordinator_config(pipeline_settings(), true));
  auto report = request_report(coordinator);
  run();
  advance(3300);
  ASSERT_TRUE(report->value) << render(report->error);
  auto stranded = nlohmann::json::parse(*report->value)["stranded_leases"]
                      .get<std::string>();
  EXPECT_EQ(stranded.rfind("256 rows stay SENDING under the lease of a dead "
                           "relay (relay-test-0-3): they wait for it to "
                           "expire (in 57 s); a relay takes them over once "
                           "the FAILED rows ahead of them are retried",
                           0),
            0u)
      << stranded;
  EXPECT_NE(metrics::run_report_failure(*report->value).find(stranded),
            std::string::npos);
}

TEST_F(ActorCoordinatorStall, AnInterruptedBoundedRunIsNotAViolation) {
  pipeline_->snapshot.pending = 5;
  auto setup = coordinator_config(pipeline_settings(), true);
  setup.settings.run.orders = 0;
  auto coordinator = spawn_coordinator(setup);
  auto report = request_report(coordinator);
  run();
  advance(500);
  request_shutdown(coordinator);
  run();
  ASSERT_TRUE(report->value) << render(report->error);
  auto r = nlohmann::json::parse(*report->value);
  EXPECT_TRUE(r["ok"].get<bool>()) << r.dump();
  EXPECT_TRUE(r["interrupted"].get<bool>());
  EXPECT_EQ(r["left_undone"]["rows_not_published"], 5) << r.dump();
}

} // namespace
