#include "actors/coordinator.hpp"

#include "pipeline_fixture.hpp"

#include <nlohmann/json.hpp>

// A bounded run whose remaining rows wait behind FAILED rows can never
// drain: the coordinator must end it (exit 1 with a named violation) once
// nothing has moved for longer than any backoff or takeover, not hang.

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

} // namespace
