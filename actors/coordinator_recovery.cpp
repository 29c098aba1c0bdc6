#include "actors/coordinator_recovery.hpp"

#include "actors/coordinator_consumers.hpp"
#include "broker/broker_error.hpp"

#include <caf/event_based_actor.hpp>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdint>
#include <thread>

namespace outbox::actors {

namespace {

/// Freezes the coordinator as a stopped process would be: the thread is
/// blocked on purpose, so nothing renews the lock meanwhile.
void pause_between_lists(coordinator_actor* self) {
  auto& st = self->state;
  storage::millis ms = st.setup.settings.crash.recovery_pause_ms;
  st.setup.metrics->zombie_pauses++;
  spdlog::info("coordinator {}: injected pause (between processing lists of "
               "a recovery, {} ms)",
               st.setup.name_prefix, ms);
  if (st.setup.freeze)
    st.setup.freeze(ms);
  else
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

pipeline_port::recovery_step step_of(coordinator_actor* self) {
  return [self](std::size_t moved, std::size_t lists_left) {
    auto& st = self->state;
    st.setup.metrics->recovered_entries += static_cast<std::int64_t>(moved);
    if (moved > 0 && lists_left > 0 &&
        st.setup.settings.crash.recovery_pause_ms > 0)
      pause_between_lists(self);
  };
}

} // namespace

std::size_t recover_all_lists(coordinator_actor* self) {
  auto& st = self->state;
  return st.probe->recover_all(st.lock_token, step_of(self));
}

std::size_t recover_lists_of(coordinator_actor* self,
                             const std::string& consumer) {
  auto& st = self->state;
  return st.probe->recover_consumer(consumer, st.lock_token, step_of(self));
}

bool is_fenced(const std::exception& e) {
  const auto* refused = dynamic_cast<const broker::broker_error*>(&e);
  return refused != nullptr && refused->code() == broker::broker_errc::fenced;
}

void recovery_refused(coordinator_actor* self, const std::string& what,
                      const std::exception& e) {
  auto& st = self->state;
  st.setup.metrics->fenced_moves_refused++;
  spdlog::warn("coordinator {}: the fence refused recovering {}, the "
               "consumers' lock is no longer this process's; its consumers "
               "stop until it acquires the lock anew: {}",
               st.setup.name_prefix, what, e.what());
  // The line above says why: lose_consumers need not warn again.
  st.consuming = false;
  lose_consumers(self, "the fence refused a recovery");
}

} // namespace outbox::actors
