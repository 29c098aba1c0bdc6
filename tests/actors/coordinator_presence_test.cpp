#include "actors/coordinator.hpp"
#include "actors/coordinator_presence.hpp"

#include "tests/actors/pipeline_fixture.hpp"

#include <string>
#include <utility>
#include <vector>

// The relay heartbeats on the test coordinator, with a fake pipeline port
// that records them: a process running relays notes how many run about once
// a second, idle or not, and says it stopped when it stops; a process
// without relays notes nothing.

using namespace outbox;
using outbox::test::pipeline_fixture;

namespace {

class ActorCoordinatorPresence : public pipeline_fixture {
protected:
  actors::coordinator_handle spawn_with(int relays, int consumers) {
    auto s = pipeline_settings();
    s.run.relays = relays;
    s.run.consumers = consumers;
    auto setup = coordinator_config(s);
    setup.consumer_lock_holder = "me";
    auto coordinator = spawn_coordinator(setup);
    run();
    return coordinator;
  }

  using note = std::pair<std::string, int>;
};

TEST_F(ActorCoordinatorPresence, NotesItsRelaysEverySecondAndItsStop) {
  auto coordinator = spawn_with(2, 0);
  advance(100);
  ASSERT_FALSE(pipeline_->relay_notes.empty());
  EXPECT_EQ(pipeline_->relay_notes.back(), (note{"me", 2}));
  auto first = pipeline_->relay_notes.size();
  advance(actors::relay_note_interval_ms / 2);
  EXPECT_EQ(pipeline_->relay_notes.size(), first) << "not before a second";
  advance(actors::relay_note_interval_ms);
  EXPECT_GT(pipeline_->relay_notes.size(), first) << "idle, still noted";
  EXPECT_EQ(pipeline_->relay_notes.back(), (note{"me", 2}));

  request_shutdown(coordinator);
  run();
  EXPECT_EQ(pipeline_->relay_notes.back(), (note{"me", -1}))
      << "a stop says so";
}

TEST_F(ActorCoordinatorPresence, AProcessWithoutRelaysNotesNothing) {
  auto coordinator = spawn_with(0, 1);
  advance(3 * actors::relay_note_interval_ms);
  request_shutdown(coordinator);
  run();
  EXPECT_TRUE(pipeline_->relay_notes.empty());
}

} // namespace
