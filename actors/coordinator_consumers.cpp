#include "actors/coordinator_consumers.hpp"

#include "actors/messages.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

namespace outbox::actors {

namespace {

bool any_consumer_running(const coordinator_state& st) {
  for (const auto& slot : st.slots)
    if (slot.kind == worker_slot::role::consumer && slot.running)
      return true;
  return false;
}

} // namespace

/// Starts this process's consumers once it holds the consumers' lock (or
/// uses none). What sits in processing lists was left by consumers that
/// are gone: earlier runs, or the process whose lock ran out (the fence
/// keeps it from moving anything now). It goes back to the head of its
/// queues first, in order. Throws broker_error (retried at the next check).
void start_consumers(coordinator_actor* self) {
  auto& st = self->state;
  auto moved = st.probe->recover_all();
  st.setup.metrics->recovered_entries += static_cast<std::int64_t>(moved);
  if (moved > 0)
    spdlog::info("coordinator {}: recovered {} in-flight entries of "
                 "earlier consumers",
                 st.setup.name_prefix, moved);
  for (auto& slot : st.slots) {
    if (slot.kind != worker_slot::role::consumer || slot.running)
      continue;
    if (slot.parked)
      ++slot.incarnation;
    slot.parked = false;
    start_worker(self, slot);
  }
  st.consuming = true;
}

/// The consumers' lock is no longer this acquisition's: stop our consumers
/// (no restart; the fence refuses them anyway) and wait to acquire it anew.
void lose_consumers(coordinator_actor* self, const std::string& why) {
  auto& st = self->state;
  if (st.consuming)
    spdlog::warn("coordinator {}: stopping this process's consumers, another "
                 "process consumes the queues now ({})",
                 st.setup.name_prefix, why);
  st.consuming = false;
  st.lock_token.clear();
  st.standby_behind.clear();
  for (auto& slot : st.slots) {
    if (slot.kind != worker_slot::role::consumer)
      continue;
    slot.parked = true;
    if (slot.running)
      self->send_exit(slot.actor, caf::exit_reason::user_shutdown);
  }
}

/// Renews the consumers' lock while this process holds it; otherwise tries
/// to acquire it, with a new token, once its previous consumers are down;
/// starts the consumers when it is ours. Only renewal keeps a lock: one
/// that lapsed is acquired anew, so consumers of the lapsed acquisition
/// stay fenced even if this same process gets the lock back (another one
/// may have recovered their entries meanwhile).
void keep_consumers(coordinator_actor* self) {
  auto& st = self->state;
  const auto& me = st.setup.consumer_lock_holder;
  const auto& s = self->state.setup.settings;
  if (st.stopping || me.empty() || s.run.consumers == 0)
    return;
  try {
    if (!st.lock_token.empty()) {
      auto holder = st.probe->renew_consumer_lock(st.lock_token, s.lease.ttl);
      if (holder != st.lock_token)
        lose_consumers(self, holder.empty()
                                 ? "the consumers' lock lapsed"
                                 : "the consumers' lock is " + holder + "'s");
    }
    if (st.lock_token.empty()) {
      if (any_consumer_running(st))
        return; // stopped ones are still going down
      auto token = me + "#" + std::to_string(st.lock_acquisitions + 1);
      auto holder = st.probe->acquire_consumer_lock(token, s.lease.ttl);
      if (holder != token) {
        if (holder != st.standby_behind)
          spdlog::info("coordinator {}: standby, {} consumes the queues; this "
                       "process's consumers take over within {} ms after it "
                       "stops or dies",
                       st.setup.name_prefix, holder, s.lease.ttl);
        st.standby_behind = holder;
        return;
      }
      ++st.lock_acquisitions;
      st.lock_token = token;
    }
    if (auto ended = st.lock_trouble.recovered(st.setup.clock()))
      spdlog::info("coordinator {}: consumers' lock reachable again after {} "
                   "ms",
                   st.setup.name_prefix, ended->lasted_ms);
    if (!st.consuming) {
      start_consumers(self);
      spdlog::info("coordinator {}: consuming the queues (holds {} as {})",
                   st.setup.name_prefix, s.broker.consumer_lock(),
                   st.lock_token);
    }
  } catch (const std::exception& e) {
    // Retried at the next check; the fence stops our consumers if the lock
    // goes elsewhere meanwhile.
    auto level = st.lock_trouble.failure_level(st.setup.clock());
    spdlog::log(level,
                "coordinator {}: cannot renew or acquire the consumers' "
                "lock, retrying: {}",
                st.setup.name_prefix, e.what());
  }
}

} // namespace outbox::actors
