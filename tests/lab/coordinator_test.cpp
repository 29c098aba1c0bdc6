#include "lab/coordinator.hpp"

#include "actors/messages.hpp"
#include "lab/plan.hpp"
#include "lab/view.hpp"
#include "support/redis_server.hpp"
#include "support/temp_dir.hpp"
#include "support/test_actor_system.hpp"

#include <caf/all.hpp>
#include <caf/scheduler/test_coordinator.hpp>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

// The lab coordinator on CAF's test coordinator: its children run on the
// test's thread and its time is virtual, so the relay_crash takeover, which
// waits for a lease of 1.5 s, is seen to wait for exactly that lease and not
// for the wall clock. The stores are real (app.db, a private redis-server).

namespace outbox::lab {
namespace {

/// What the lab answered to run_atom, once it did.
struct lab_outcome {
  bool arrived = false;
  std::string failure;
};

class LabCoordinator : public ::testing::Test {
protected:
  LabCoordinator()
      : sys_(test::test_system_config(cfg_)),
        sched_(
            dynamic_cast<caf::scheduler::test_coordinator&>(sys_.scheduler())) {
  }

  ~LabCoordinator() override {
    // A lab that is still waiting is killed (its exit handler would turn a
    // shutdown into a failure that waits for its children) with them.
    if (lab_)
      caf::anon_send_exit(lab_, caf::exit_reason::kill);
    sched_.run();
    test::expect_no_actors_left(sys_);
  }

  /// The lab's setup on the test's Redis, driven by the test: children on
  /// the test coordinator, the virtual clock for every reading of time.
  lab_setup setup_for(std::vector<lab_step> plan) {
    config::settings base;
    base.redis = redis_.connection_options();
    lab_setup setup;
    setup.settings = lab_settings(base, files_);
    setup.files = files_;
    setup.plan = std::move(plan);
    setup.name_prefix = "test";
    setup.say = [said = said_](const std::string& line) {
      said->push_back(line);
    };
    setup.detached = false;
    setup.clock = [clock = clock_ms_] { return *clock; };
    setup.monotonic = setup.clock;
    return setup;
  }

  /// Spawns the lab and asks it to run (run_atom), as `outbox lab` does.
  std::shared_ptr<lab_outcome> run_lab(lab_setup setup) {
    lab_ = sys_.spawn(lab_coordinator, std::move(setup));
    auto out = std::make_shared<lab_outcome>();
    sys_.spawn([lab = lab_, out](caf::event_based_actor* self) {
      self->request(lab, caf::infinite, actors::run_atom_v)
          .then(
              [out](const std::string& failure) {
                out->arrived = true;
                out->failure = failure;
              },
              [out, self](caf::error& err) {
                out->arrived = true;
                out->failure = "no answer: " + self->system().render(err);
              });
    });
    sched_.run();
    return out;
  }

  /// Moves the virtual clock and the scheduler's time forward together,
  /// 10 ms at a time, running every message due after each step.
  void advance(storage::millis total) {
    for (storage::millis step = 10; total > 0; total -= step) {
      *clock_ms_ += step;
      sched_.advance_time(std::chrono::milliseconds(step));
      sched_.run();
    }
  }

  bool said(const std::string& fragment) const {
    return std::any_of(said_->begin(), said_->end(), [&](const auto& line) {
      return line.find(fragment) != std::string::npos;
    });
  }

  std::string file_text(const std::filesystem::path& file) {
    std::ifstream in{file};
    return {std::istreambuf_iterator<char>{in},
            std::istreambuf_iterator<char>{}};
  }

  test::temp_dir tmp_{"outbox-lab-actor"};
  lab_files files_{tmp_.path()};
  test::redis_server redis_;
  std::shared_ptr<storage::millis> clock_ms_ =
      std::make_shared<storage::millis>(1'700'000'000'000);
  std::shared_ptr<std::vector<std::string>> said_ =
      std::make_shared<std::vector<std::string>>();
  // The system keeps a reference to its config: the config comes first.
  caf::actor_system_config cfg_;
  caf::actor_system sys_;
  caf::scheduler::test_coordinator& sched_;
  caf::actor lab_;
};

TEST_F(LabCoordinator, TakeoverAfterARelayCrashWaitsForTheLeaseOnTheLabsClock) {
  auto outcome = run_lab(setup_for({lab_step::init, lab_step::relay_crash}));
  advance(100);
  // The crashing relay published and died; its lease holds the row.
  ASSERT_TRUE(said("crashed before marking it PUBLISHED: 1 row(s) still "
                   "SENDING under its lease."))
      << said_->size() << " lines said";
  EXPECT_TRUE(said("under the lease of lab-crashing-relay-test-1, a relay "
                   "that published without acknowledging."));
  advance(lab_lease_ttl_ms - 200);
  EXPECT_FALSE(outcome->arrived) << outcome->failure;
  EXPECT_FALSE(std::filesystem::exists(files_.atleastonce_out()));

  // Past the lease, the takeover relay publishes the row again.
  advance(600);
  ASSERT_TRUE(outcome->arrived);
  EXPECT_EQ(outcome->failure, "");
  auto line = file_text(files_.atleastonce_out());
  EXPECT_EQ(line.rfind("DUPLICATE event_id=", 0), 0u) << line;
  EXPECT_THAT(line, testing::HasSubstr(" count=2\n"));
  lab_view view{setup_for({}).settings, files_};
  auto rows = view.outbox(*clock_ms_);
  EXPECT_EQ(rows.published, 1);
  EXPECT_EQ(rows.sending, 0);
  EXPECT_EQ(view.queue().queued, 2);
}

TEST_F(LabCoordinator, AStepGivesUpAfterItsTimeoutOnTheLabsClock) {
  auto setup = setup_for({lab_step::init, lab_step::relay_crash});
  // Shorter than the lease the takeover relay must wait for.
  setup.step_timeout_ms = 1000;
  auto outcome = run_lab(std::move(setup));
  advance(900);
  EXPECT_FALSE(outcome->arrived) << outcome->failure;
  advance(300);
  ASSERT_TRUE(outcome->arrived);
  EXPECT_EQ(outcome->failure,
            "step relay_crash: gave up after 1 s waiting for the relay to "
            "publish every PENDING row");
  EXPECT_FALSE(std::filesystem::exists(files_.atleastonce_out()));
}

} // namespace
} // namespace outbox::lab
