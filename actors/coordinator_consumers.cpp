#include "actors/coordinator_consumers.hpp"

#include "actors/coordinator_children.hpp"
#include "actors/coordinator_recovery.hpp"
#include "actors/lock_token.hpp"
#include "actors/messages.hpp"
#include "actors/outage.hpp"
#include "actors/refusal.hpp"

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

/// Trouble with the consumers' lock or with starting the consumers,
/// retried at the next check: counted when it is an outage (waited out,
/// not a stall), warned about once per stretch of it (`trouble`).
void retry_later(coordinator_state& st, outage& trouble,
                 const std::exception& e, const char* what) {
  note_outage(st.setup.metrics->outage_retries, e);
  note_refusal(st.setup.metrics->refusals, e, st.setup.clock());
  spdlog::log(trouble.failure_level(st.setup.clock()),
              "coordinator {}: {}, retrying: {}", st.setup.name_prefix, what,
              e.what());
}

} // namespace

/// Starts this process's consumers once it holds the consumers' lock (or
/// uses none). What sits in processing lists was left by consumers that
/// are gone: earlier runs, or the process whose lock ran out (the fence
/// keeps it from moving anything now). It goes back to the head of its
/// queues first, in order, each list under this acquisition's fence.
/// Throws broker_error (fenced: the lock went elsewhere meanwhile; else
/// retried at the next check).
void start_consumers(coordinator_actor* self) {
  auto& st = self->state;
  auto moved = recover_all_lists(st);
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
  if (st.consuming && !st.stopping)
    spdlog::warn("coordinator {}: stopping this process's consumers, the "
                 "consumers' lock is no longer theirs ({})",
                 st.setup.name_prefix, why);
  st.consuming = false;
  st.lock_token.clear();
  st.standby_behind.clear();
  for (std::size_t i = 0; i < st.slots.size(); ++i) {
    auto& slot = st.slots[i];
    if (slot.kind != worker_slot::role::consumer)
      continue;
    slot.parked = true;
    if (slot.running)
      self->send_exit(st.workers[i], caf::exit_reason::user_shutdown);
  }
}

namespace {

/// Renews the lock, or acquires it anew once the previous consumers are
/// down. True when this process holds it after the call. Throws
/// broker_error.
bool hold_lock(coordinator_actor* self) {
  auto& st = self->state;
  const auto& s = st.setup.settings;
  if (!st.lock_token.empty()) {
    auto holder =
        st.probe->renew_consumer_lock(st.lock_token, s.lease.lock_ttl());
    if (holder == st.lock_token)
      return true;
    lose_consumers(self, holder.empty()
                             ? "it lapsed"
                             : "another process, " + holder + ", holds it");
  }
  if (any_consumer_running(st))
    return false; // stopped ones are still going down
  auto token = acquisition_token(st.setup.consumer_lock_holder,
                                 st.lock_acquisitions + 1);
  auto holder = st.probe->acquire_consumer_lock(token, s.lease.lock_ttl());
  if (holder != token) {
    if (holder != st.standby_behind)
      spdlog::info("coordinator {}: standby, {} consumes the queues; this "
                   "process's consumers take over within {} ms after it "
                   "stops or dies",
                   st.setup.name_prefix, holder, s.lease.lock_ttl());
    st.standby_behind = holder;
    return false;
  }
  ++st.lock_acquisitions;
  st.lock_token = token;
  return true;
}

} // namespace

void keep_consumers(coordinator_actor* self) {
  auto& st = self->state;
  const auto& s = st.setup.settings;
  if (st.stopping || st.setup.consumer_lock_holder.empty() ||
      s.run.consumers == 0)
    return;
  bool held = false;
  try {
    held = hold_lock(self);
  } catch (const std::exception& e) {
    // Retried at the next check; the fence stops our consumers if the lock
    // goes elsewhere meanwhile. An outage (a replica, a full Redis) is
    // waited out, not a stall.
    retry_later(st, st.lock_trouble, e,
                "cannot renew or acquire the consumers' lock");
    return;
  }
  st.lock_trouble.log_end(st.setup.clock, "coordinator", st.setup.name_prefix,
                          "consumers' lock reachable");
  if (!held || st.consuming)
    return;
  try {
    start_consumers(self);
    st.start_trouble.recovered(st.setup.clock());
    spdlog::info("coordinator {}: consuming the queues (holds {} as {})",
                 st.setup.name_prefix, s.broker.consumer_lock(), st.lock_token);
  } catch (const std::exception& e) {
    if (is_fenced(e)) {
      // Frozen past the ttl between two lists: the rest is another's now.
      st.recovery_refused("the processing lists left in flight", e);
      lose_consumers(self, "the fence refused a recovery");
      return;
    }
    // The lock stays ours (renewed at every check) until this succeeds.
    retry_later(st, st.start_trouble, e,
                "holds the consumers' lock but cannot put the in-flight "
                "entries back yet");
  }
}

} // namespace outbox::actors
