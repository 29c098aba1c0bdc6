#include "actors/system_config.hpp"

#include <caf/actor_system_config.hpp>
#include <caf/config_value.hpp>
#include <caf/defaults.hpp>
#include <caf/settings.hpp>

#include <gtest/gtest.h>

#include <cstddef>

namespace {

std::size_t moderate_polls(const caf::actor_system_config& cfg) {
  // What CAF's work-stealing workers read when they start.
  return caf::get_or(cfg, "work-stealing.moderate-poll-attempts",
                     caf::defaults::work_stealing::moderate_poll_attempts);
}

} // namespace

TEST(ActorSystemConfig, IdleWorkersSleepOnTheirConditionVariable) {
  caf::actor_system_config plain;
  ASSERT_GT(moderate_polls(plain), 0u) << "CAF's default polls with sleeps";
  caf::actor_system_config tuned;
  outbox::actors::tune_scheduler(tuned);
  EXPECT_EQ(moderate_polls(tuned), 0u);
}
