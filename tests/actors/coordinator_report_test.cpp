#include "actors/coordinator.hpp"
#include "metrics/run_report_json.hpp"

#include "tests/actors/pipeline_fixture.hpp"

#include <gmock/gmock.h>
#include <nlohmann/json.hpp>

#include <string>

// The end of a run on the test coordinator: Redis or the database out just
// as a bounded run reads its final state is waited out (the run's work is
// committed), for a bounded time; a fault that waiting cannot end, or a
// stop on request, is reported at once.

using namespace outbox;
using outbox::test::pipeline_fixture;

namespace {

class ActorCoordinatorReport : public pipeline_fixture {
protected:
  /// A bounded run with nothing to do: its first check finds it drained (a
  /// clean snapshot, read lightly, then in full to confirm), it stops its
  /// relay and reads the final state, which is whatever
  /// pipeline_->snapshot says from then on.
  std::shared_ptr<test::reply<std::string>>
  end_by_itself(actors::coordinator_setup setup) {
    pipeline_->source = [pipeline = pipeline_.get(), clean = 2]() mutable {
      if (clean > 0) {
        --clean;
        return metrics::pipeline_snapshot{};
      }
      return pipeline->snapshot;
    };
    setup.until_drained = true;
    coordinator_ = spawn_coordinator(setup);
    auto report = request_report(coordinator_);
    run();
    return report;
  }

  /// An unbounded run, shut down at once (SIGINT); stopping_ turns true
  /// just before.
  std::shared_ptr<test::reply<std::string>>
  shut_down(const actors::coordinator_setup& setup) {
    coordinator_ = spawn_coordinator(setup);
    auto report = request_report(coordinator_);
    run();
    stopping_ = true;
    request_shutdown(coordinator_);
    run();
    return report;
  }

  actors::coordinator_handle coordinator_;
  bool stopping_ = false;
};

constexpr const char* redis_gone =
    "redis: Redis at 127.0.0.1:1 failed during HSCAN: Connection reset by "
    "peer";

nlohmann::json parse(const std::string& report) {
  return nlohmann::json::parse(report);
}

TEST_F(ActorCoordinatorReport, WaitsOutARedisOutageBeforeTheReport) {
  pipeline_->snapshot.trouble = redis_gone;
  pipeline_->snapshot.outage = true;
  auto setup = coordinator_config(pipeline_settings());
  auto report = end_by_itself(setup);
  auto exit = watch(coordinator_);
  advance(1000);
  EXPECT_FALSE(report->arrived) << "the report waits while Redis is out";
  EXPECT_FALSE(exit->exited);
  auto reads = pipeline_->snapshots;

  pipeline_->snapshot.trouble.clear();
  pipeline_->snapshot.outage = false;
  advance(setup.check_interval_ms);
  EXPECT_GT(pipeline_->snapshots, reads);
  ASSERT_TRUE(report->arrived) << "Redis is back: the report follows";
  ASSERT_TRUE(report->value) << render(report->error);
  EXPECT_TRUE(exit->exited);
  auto r = parse(*report->value);
  EXPECT_TRUE(r["ok"].get<bool>()) << r.dump();
  EXPECT_EQ(r["final_state_error"], "");
  EXPECT_EQ(pipeline_->audits, 1);
}

TEST_F(ActorCoordinatorReport, AnAuditCutShortByAnOutageIsReadAgain) {
  pipeline_->audit_outages = 3;
  auto report = end_by_itself(coordinator_config(pipeline_settings()));
  EXPECT_FALSE(report->arrived);
  advance_until([&] { return report->arrived; }, 10, 20);
  ASSERT_TRUE(report->arrived);
  ASSERT_TRUE(report->value) << render(report->error);
  EXPECT_TRUE(parse(*report->value)["ok"].get<bool>()) << *report->value;
  EXPECT_EQ(pipeline_->audits, 4) << "three outages, then the verdict";
}

TEST_F(ActorCoordinatorReport, GivesUpAfterItsPatienceAndSaysWhy) {
  pipeline_->snapshot.trouble = redis_gone;
  pipeline_->snapshot.outage = true;
  auto setup = coordinator_config(pipeline_settings());
  setup.final_read_patience_ms = 2000;
  auto report = end_by_itself(setup);
  advance(1900);
  EXPECT_FALSE(report->arrived);
  advance(200);
  ASSERT_TRUE(report->arrived) << "the wait is bounded";
  ASSERT_TRUE(report->value) << render(report->error);
  auto r = parse(*report->value);
  EXPECT_FALSE(r["ok"].get<bool>());
  EXPECT_EQ(r["final_state_error"], redis_gone);
  ASSERT_FALSE(r["violations"].empty());
  EXPECT_EQ(r["violations"][0],
            std::string{metrics::unread_state_violation} + redis_gone);
  auto parsed = metrics::run_report_from_json(*report->value);
  ASSERT_TRUE(parsed) << *report->value;
  EXPECT_EQ(metrics::to_json(*parsed), *report->value)
      << "the report reads back to the bytes the coordinator answered";
  auto line = metrics::run_report_failure(*parsed);
  EXPECT_THAT(line, testing::HasSubstr(redis_gone));
  EXPECT_THAT(line, testing::HasSubstr("outbox verify"));
  EXPECT_EQ(pipeline_->audits, 0) << "no verdict from unread stores";
}

TEST_F(ActorCoordinatorReport, AFaultThatWaitingCannotEndIsReportedAtOnce) {
  pipeline_->snapshot.trouble =
      "database: audit: database x.db is not an outbox database";
  pipeline_->snapshot.outage = false;
  auto report = end_by_itself(coordinator_config(pipeline_settings()));
  ASSERT_TRUE(report->arrived) << "no waiting for a fault";
  ASSERT_TRUE(report->value) << render(report->error);
  auto r = parse(*report->value);
  EXPECT_FALSE(r["ok"].get<bool>());
  EXPECT_EQ(r["final_state_error"], pipeline_->snapshot.trouble);
}

TEST_F(ActorCoordinatorReport, AStopRequestEndsTheWait) {
  pipeline_->snapshot.trouble = redis_gone;
  pipeline_->snapshot.outage = true;
  auto report = end_by_itself(coordinator_config(pipeline_settings()));
  advance(500);
  EXPECT_FALSE(report->arrived);
  // SIGINT: the operator will not wait for Redis.
  request_shutdown(coordinator_);
  run();
  ASSERT_TRUE(report->arrived) << "the stop request ends the wait";
  ASSERT_TRUE(report->value) << render(report->error);
  auto r = parse(*report->value);
  EXPECT_FALSE(r["ok"].get<bool>());
  EXPECT_EQ(r["final_state_error"], redis_gone);
}

TEST_F(ActorCoordinatorReport, ARunStoppedOnRequestDoesNotWait) {
  pipeline_->snapshot.trouble = redis_gone;
  pipeline_->snapshot.outage = true;
  auto report = shut_down(coordinator_config(pipeline_settings()));
  ASSERT_TRUE(report->arrived) << "SIGTERM from a supervisor: report now";
  ASSERT_TRUE(report->value) << render(report->error);
  EXPECT_EQ(parse(*report->value)["final_state_error"], redis_gone);
}

TEST_F(ActorCoordinatorReport, ARunStoppedOnRequestReadsOnceMoreAfterAnOutage) {
  // A session the server ended since its last use (pg_terminate_backend
  // just before the SIGTERM) fails the first read of the final state; the
  // store connects anew for the next one.
  int failed_reads = 0;
  pipeline_->source = [&] {
    metrics::pipeline_snapshot snap;
    if (stopping_ && failed_reads == 0) {
      ++failed_reads;
      snap.trouble = "database: stats: lost the connection to PostgreSQL";
      snap.outage = true;
    }
    return snap;
  };
  auto report = shut_down(coordinator_config(pipeline_settings()));
  ASSERT_TRUE(report->arrived) << "a stop on request still does not wait";
  ASSERT_TRUE(report->value) << render(report->error);
  EXPECT_EQ(failed_reads, 1);
  auto r = parse(*report->value);
  EXPECT_EQ(r["final_state_error"], "") << r.dump();
}

TEST_F(ActorCoordinatorReport, ASlowFailedReadIsNotTriedAgainOnAStop) {
  // A read that failed only after a connect timed out: trying again would
  // make a stop on request wait twice as long.
  int failed_reads = 0;
  pipeline_->source = [&] {
    metrics::pipeline_snapshot snap;
    if (stopping_) {
      ++failed_reads;
      *clock_ms_ += 10'000; // the connect timeout
      snap.trouble = "database: cannot reach PostgreSQL";
      snap.outage = true;
    }
    return snap;
  };
  auto report = shut_down(coordinator_config(pipeline_settings()));
  ASSERT_TRUE(report->arrived);
  ASSERT_TRUE(report->value) << render(report->error);
  EXPECT_EQ(failed_reads, 1);
  EXPECT_EQ(parse(*report->value)["final_state_error"],
            "database: cannot reach PostgreSQL");
}

TEST_F(ActorCoordinatorReport, ARunThatCannotStartStillReports) {
  auto setup = coordinator_config(pipeline_settings());
  setup.make_probe = []() -> std::unique_ptr<actors::pipeline_port> {
    throw std::runtime_error("database x.db is locked");
  };
  coordinator_ = spawn_coordinator(setup);
  auto report = request_report(coordinator_);
  run();
  ASSERT_TRUE(report->arrived);
  ASSERT_TRUE(report->value) << render(report->error);
  auto r = parse(*report->value);
  EXPECT_FALSE(r["ok"].get<bool>());
  ASSERT_FALSE(r["violations"].empty());
  EXPECT_EQ(r["violations"][0], "cannot start: database x.db is locked");
}

TEST(ActorRunReportFailure, NamesTheFirstViolationAndCountsTheRest) {
  metrics::run_outcome outcome;
  outcome.failure = "relay-x-0-3 crashed more than run.restart_budget (3)";
  outcome.audit.emplace().checks = {{"published_processed",
                                     metrics::audit_check::state::failed,
                                     "2 PUBLISHED rows never processed"}};
  metrics::run_metrics metrics;
  auto report = metrics::run_report_of(outcome, metrics);
  EXPECT_FALSE(report.ok);
  EXPECT_EQ(metrics::run_report_failure(report),
            "invariants violated: relay-x-0-3 crashed more than "
            "run.restart_budget (3) and 1 more (see \"violations\")");
}

TEST(ActorRunReportFailure, AnUnreadStateDoesNotHideAnEarlierFailure) {
  metrics::run_outcome outcome;
  outcome.failure = "writer died: disk full";
  outcome.final_state.trouble = redis_gone;
  metrics::run_metrics metrics;
  auto line =
      metrics::run_report_failure(metrics::run_report_of(outcome, metrics));
  EXPECT_EQ(line.rfind("invariants violated: writer died: disk full and 1 "
                       "more",
                       0),
            0u)
      << line;
  EXPECT_THAT(line, testing::HasSubstr("outbox verify"));
}

TEST(ActorRunReportFailure, OddReportsGetALineNotAnException) {
  // Text that is no JSON object is refused where it is read (the tool
  // then says "the report is not a JSON object"); an odd object still
  // gets a line.
  EXPECT_FALSE(metrics::run_report_from_json("[1, 2]"));
  EXPECT_FALSE(metrics::run_report_from_json("not json"));
  auto odd = metrics::run_report_from_json(
      R"({"violations": "x", "final_state_error": null})");
  ASSERT_TRUE(odd);
  EXPECT_EQ(metrics::run_report_failure(*odd),
            "invariants violated (see \"violations\")");
}

TEST(ActorRunReport, InvalidUtf8InAMessageIsReplacedNotThrown) {
  metrics::run_outcome outcome;
  outcome.failure = "cannot start: database /tmp/\xff\xfe.db is locked";
  metrics::run_metrics metrics;
  std::string report;
  ASSERT_NO_THROW(
      report = metrics::to_json(metrics::run_report_of(outcome, metrics)));
  auto r = parse(report);
  EXPECT_FALSE(r["ok"].get<bool>());
  EXPECT_NE(r["violations"][0].get<std::string>().find("is locked"),
            std::string::npos);
}

} // namespace
