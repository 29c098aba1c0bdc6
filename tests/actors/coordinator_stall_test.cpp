#include "actors/coordinator.hpp"
#include "metrics/run_report_json.hpp"

#include "tests/actors/pipeline_fixture.hpp"

#include <gmock/gmock.h>
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
  auto report = start_run(bounded_config()).report;
  // ttl 1000 ms, backoff cap 100 ms, idle poll cap 100 ms: 3.1 s of stillness.
  advance(3000);
  EXPECT_FALSE(report->arrived) << "still within the stall timeout";
  advance(300);
  EXPECT_TRUE(failed_with(*report, "FAILED rows block 2"));
}

TEST_F(ActorCoordinatorStall, MovementRestartsTheStallClock) {
  pipeline_->snapshot.failed = 1;
  pipeline_->snapshot.pending = 3;
  auto report = start_run(bounded_config()).report;
  advance(2500);
  pipeline_->snapshot.pending = 2; // a row moved on
  pipeline_->snapshot.published = 1;
  advance(2500);
  EXPECT_FALSE(report->arrived) << "something moved 2.5 s ago";
  pipeline_->snapshot.pending = 0; // drained but for the FAILED row
  advance(200);
  EXPECT_TRUE(report_json(*report)["ok"].get<bool>());
}

TEST_F(ActorCoordinatorStall, BoundedRunEndsWhenItsQueuesStopMoving) {
  auto settings = pipeline_settings();
  settings.run.relays = 0;
  settings.run.consumers = 1;
  pipeline_->snapshot.queued = 5;
  pipeline_->snapshot.in_processing = 1;
  auto report = start_run(coordinator_config(settings, true)).report;
  advance(3000);
  EXPECT_FALSE(report->arrived) << "still within the stall timeout";
  advance(300);
  EXPECT_TRUE(failed_with(
      *report, "5 entries queued and 1 in processing lists are not consumed"));
}

TEST_F(ActorCoordinatorStall, AnOutageIsWaitedOutNotAStall) {
  pipeline_->snapshot.pending = 2;
  auto report = start_run(bounded_config()).report;
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
  EXPECT_TRUE(report_json(*report)["ok"].get<bool>());
}

TEST_F(ActorCoordinatorStall, AnOutageShowsTheLastCountsNotZeros) {
  auto& snap = pipeline_->snapshot;
  snap.outbox_rows = 300;
  snap.pending = 100;
  snap.published = 200;
  snap.queued = 7;
  snap.processed = 190;
  auto setup = bounded_config();
  std::string last;
  setup.progress = [&last](const actors::run_progress& p) {
    last = actors::progress_text(p, 0);
  };
  auto report = start_run(setup).report;
  advance(1100);
  EXPECT_THAT(last, testing::HasSubstr("published 200/300"));
  // The database stops answering: the probe has no outbox figures, only
  // the trouble; Redis still answers, with news.
  snap = metrics::pipeline_snapshot{};
  snap.queued = 0;
  snap.processed = 197;
  snap.database_answered = false;
  snap.trouble = "database: locked";
  snap.outage = true;
  advance(1100);
  EXPECT_THAT(last, testing::HasSubstr("published 200/300"));
  EXPECT_THAT(last, testing::HasSubstr("pending 100"));
  EXPECT_THAT(last, testing::HasSubstr("processed 197"));
  EXPECT_THAT(last, testing::HasSubstr("database: locked"));
  EXPECT_FALSE(report->arrived);
  // The database answers again, everything published: the run ends.
  snap = metrics::pipeline_snapshot{};
  snap.outbox_rows = 300;
  snap.published = 300;
  advance(200);
  EXPECT_TRUE(report_json(*report)["ok"].get<bool>());
}

TEST_F(ActorCoordinatorStall, RowsNobodyPublishesEndABoundedRun) {
  pipeline_->snapshot.pending = 2;
  auto report = start_run(bounded_config()).report;
  advance(3300);
  EXPECT_TRUE(
      failed_with(*report, "2 rows PENDING or SENDING are not published"));
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
  auto report = start_run(setup).report;
  advance(2500);
  ASSERT_FALSE(lines->empty());
  EXPECT_THAT(
      lines->back(),
      testing::HasSubstr("40 PENDING rows but no relay in this process"));
  EXPECT_THAT(lines->back(), testing::HasSubstr("the run ends in"));
  advance(800);
  EXPECT_TRUE(failed_with(*report, "no relay runs in this process"));
}

TEST_F(ActorCoordinatorStall, TheLineNamesLeasesOfADeadRelayAndTheirExpiry) {
  pipeline_->snapshot.pending = 10;
  pipeline_->snapshot.sending = 256;
  auto setup = bounded_config();
  std::string last;
  setup.progress = [&last](const actors::run_progress& p) {
    last = actors::progress_text(p, 0);
  };
  auto report = start_run(setup).report;
  // A relay of this process that is gone (an earlier incarnation).
  pipeline_->snapshot.leases.push_back(metrics::lease_holding{
      worker(actors::worker_slot::role::relay, 7), 256, now() + 9000});
  advance(2100);
  EXPECT_THAT(last,
              testing::HasSubstr(
                  "waiting for 256 leases of a dead relay, expire in 7 s"));
  advance(1300); // past the stall timeout: the run ends
  ASSERT_TRUE(report->value) << render(report->error);
}

TEST_F(ActorCoordinatorStall, RowsLeftUnderADeadRelaysLeaseAreNamedAtTheEnd) {
  pipeline_->snapshot.failed = 1;
  pipeline_->snapshot.sending = 256;
  pipeline_->snapshot.leases.push_back(metrics::lease_holding{
      worker(actors::worker_slot::role::relay, 3), 256, now() + 60'000});
  auto report = start_run(bounded_config()).report;
  advance(3300);
  auto stranded = report_json(*report)["stranded_leases"].get<std::string>();
  EXPECT_EQ(stranded.rfind("256 rows stay SENDING under the lease of a dead "
                           "relay (relay-test-0-3): they wait for it to "
                           "expire (in 57 s); a relay takes them over once "
                           "the FAILED rows ahead of them are retried",
                           0),
            0u)
      << stranded;
  auto parsed = metrics::run_report_from_json(*report->value);
  ASSERT_TRUE(parsed) << *report->value;
  EXPECT_NE(metrics::run_report_failure(*parsed).find(stranded),
            std::string::npos);
}

TEST_F(ActorCoordinatorStall, AnInterruptedBoundedRunIsNotAViolation) {
  pipeline_->snapshot.pending = 5;
  auto setup = bounded_config();
  setup.settings.run.orders = 0;
  auto [coordinator, report] = start_run(setup);
  advance(500);
  request_shutdown(coordinator);
  run();
  auto r = report_json(*report);
  EXPECT_TRUE(r["ok"].get<bool>()) << r.dump();
  EXPECT_TRUE(r["interrupted"].get<bool>());
  EXPECT_EQ(r["left_undone"]["rows_not_published"], 5) << r.dump();
  auto parsed = metrics::run_report_from_json(*report->value);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(metrics::to_json(*parsed), *report->value)
      << "the report reads back to the bytes the coordinator answered";
}

} // namespace
