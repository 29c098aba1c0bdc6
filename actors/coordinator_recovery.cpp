#include "actors/coordinator_recovery.hpp"

#include "broker/broker_error.hpp"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdint>
#include <thread>

namespace outbox::actors {

namespace {

/// Freezes the coordinator as a stopped process would be: the thread is
/// blocked on purpose, so nothing renews the lock meanwhile.
void pause_between_lists(coordinator_core& st) {
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

pipeline_port::recovery_step step_of(coordinator_core& core) {
  return [&st = core](std::size_t moved, std::size_t lists_left) {
    st.setup.metrics->recovered_entries += static_cast<std::int64_t>(moved);
    if (moved > 0 && lists_left > 0 &&
        st.setup.settings.crash.recovery_pause_ms > 0)
      pause_between_lists(st);
  };
}

} // namespace

std::size_t recover_all_lists(coordinator_core& st) {
  return st.probe->recover_all(st.lock_token, step_of(st));
}

std::size_t recover_lists_of(coordinator_core& st,
                             const std::string& consumer) {
  return st.probe->recover_consumer(consumer, st.lock_token, step_of(st));
}

bool is_fenced(const std::exception& e) {
  const auto* refused = dynamic_cast<const broker::broker_error*>(&e);
  return refused != nullptr && refused->code() == broker::broker_errc::fenced;
}

} // namespace outbox::actors
