#include "actors/coordinator_presence.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <exception>

namespace outbox::actors {

namespace {

/// Only processes that run relays note: a consumer-only or writer-only
/// process is not one that could publish. Tests without a process name
/// (no consumers' lock either) note nothing.
bool notes_relays(const coordinator_core& st) {
  return st.probe && !st.setup.consumer_lock_holder.empty() &&
         st.setup.settings.run.relays > 0;
}

int relays_running(const coordinator_core& st) {
  int running = 0;
  for (const auto& slot : st.slots)
    if (slot.kind == worker_slot::role::relay && slot.running)
      ++running;
  return running;
}

} // namespace

void keep_relay_note(coordinator_core& st) {
  if (!notes_relays(st))
    return;
  auto now = st.setup.clock();
  auto running = relays_running(st);
  // A relay that went down or came back is said at once.
  if (st.relay_noted_at != 0 && running == st.relays_noted &&
      now - st.relay_noted_at < relay_note_interval_ms)
    return;
  // Tried again a second later, not at every check: an outage costs this
  // process no more calls than the heartbeat itself.
  st.relay_noted_at = now;
  try {
    // The note outlives a few intervals whatever the lease: a short lease
    // must not make a live process look silent between two notes.
    st.probe->note_relays(
        st.setup.consumer_lock_holder, running,
        st.setup.settings.lease.heartbeat_ttl(relay_note_interval_ms));
    st.relays_noted = running;
    st.relay_note_trouble.log_end(st.setup.clock, "coordinator",
                                  st.setup.name_prefix,
                                  "relay heartbeat noted");
  } catch (const std::exception& e) {
    spdlog::log(st.relay_note_trouble.failure_level(now),
                "coordinator {}: relay heartbeat not noted (outbox status "
                "will show this process silent): {}",
                st.setup.name_prefix, e.what());
  }
}

void note_relays_stopped(coordinator_core& st) {
  if (!notes_relays(st) || st.relay_noted_at == 0)
    return;
  try {
    st.probe->relays_stopped(st.setup.consumer_lock_holder);
  } catch (const std::exception& e) {
    spdlog::debug("coordinator {}: relay stop not noted (the note runs out "
                  "instead): {}",
                  st.setup.name_prefix, e.what());
  }
}

} // namespace outbox::actors
