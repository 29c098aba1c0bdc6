#include "actors/coordinator.hpp"

#include "actors/consumer.hpp"
#include "actors/coordinator_consumers.hpp"
#include "actors/coordinator_presence.hpp"
#include "actors/coordinator_progress.hpp"
#include "actors/coordinator_recovery.hpp"
#include "actors/coordinator_report.hpp"
#include "actors/load_generator.hpp"
#include "actors/messages.hpp"
#include "actors/refusal.hpp"
#include "actors/writer.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <chrono>

namespace outbox::actors {

namespace {

using std::chrono::milliseconds;

/// Spawns a child linked (it dies with us) and monitored (we see it die),
/// on its own thread when the setup says so.
template <class F, class... Ts>
caf::actor spawn_child(coordinator_actor* self, bool detached, F fun,
                       Ts&&... xs) {
  auto child = detached
                   ? self->spawn<caf::detached + caf::linked + caf::monitored>(
                         fun, std::forward<Ts>(xs)...)
                   : self->spawn<caf::linked + caf::monitored>(
                         fun, std::forward<Ts>(xs)...);
  self->state.children.insert(child.address());
  // The writer, relays and consumers are typed (interfaces.hpp); the slots
  // hold every child alike.
  return caf::actor_cast<caf::actor>(child);
}

/// An exit reason as a log line shows it ("outbox: injected_crash ...").
std::string describe(coordinator_actor* self, const caf::error& reason) {
  // render() dereferences a null category on an empty error in CAF 0.17.
  return reason ? self->system().render(reason) : "normal exit";
}

const config::settings& settings_of(coordinator_actor* self) {
  return self->state.setup.settings;
}

} // namespace

void start_worker(coordinator_actor* self, worker_slot& slot) {
  auto& st = self->state;
  const auto& s = settings_of(self);
  slot.name = worker_name(st.setup.name_prefix, slot.kind, slot.index,
                          slot.incarnation);
  if (slot.kind == worker_slot::role::relay) {
    relay_setup rs{slot.name,
                   s.db.for_relay(),
                   s.lease,
                   s.run.poll_interval_ms,
                   s.run.idle_poll_max_ms,
                   s.crash,
                   st.setup.make_publisher,
                   st.setup.clock,
                   st.setup.metrics};
    slot.actor = spawn_child(self, st.setup.detached, relay, std::move(rs),
                             caf::actor_cast<caf::actor>(self));
  } else {
    consumer_setup cs;
    cs.name = slot.name;
    cs.names = s.broker;
    cs.queues =
        s.broker.owned_partitions(static_cast<std::size_t>(slot.index),
                                  static_cast<std::size_t>(s.run.consumers));
    cs.block_ms = s.run.consumer_block_ms;
    cs.fenced = !st.lock_token.empty();
    cs.crash = s.crash;
    cs.make_port = [make = st.setup.make_consume_port, token = st.lock_token] {
      return make(token);
    };
    cs.clock = st.setup.clock;
    cs.metrics = st.setup.metrics;
    slot.actor = spawn_child(self, st.setup.detached, consumer, std::move(cs));
  }
  slot.running = true;
  ++st.alive;
}

namespace {

/// The writer nudges every live relay after a commit.
void tell_writer_relays(coordinator_actor* self) {
  auto& st = self->state;
  if (!st.writer)
    return;
  std::vector<relay_actor> relays;
  for (const auto& slot : st.slots)
    if (slot.kind == worker_slot::role::relay && slot.running)
      relays.push_back(caf::actor_cast<relay_actor>(slot.actor));
  self->send(st.writer, relays_atom_v, std::move(relays));
}

/// Begins a graceful stop: every child gets an exit; the report follows
/// once all are down.
void stop(coordinator_actor* self, std::string failure) {
  auto& st = self->state;
  if (!failure.empty() && st.failure.empty()) {
    st.failure = std::move(failure);
    spdlog::warn("coordinator {}: stopping the run: {}", st.setup.name_prefix,
                 st.failure);
  }
  if (st.stopping)
    return;
  st.stopping = true;
  // Its checks end here: the process is alive while it stops (the final
  // read and the audit may take long), and says so (service_presence.hpp).
  st.setup.metrics->stopping = 1;
  for (auto* child : {&st.load, &st.writer})
    if (*child)
      self->send_exit(*child, caf::exit_reason::user_shutdown);
  for (auto& slot : st.slots)
    if (slot.running)
      self->send_exit(slot.actor, caf::exit_reason::user_shutdown);
  finish_if_all_down(self);
}

/// Starts the next incarnation of a slot. A dead consumer's entries go back
/// to the head of their queues first, so order and delivery survive the
/// crash; if Redis cannot be reached for that, the slot waits and tries
/// again rather than letting a new consumer overtake the stranded entries.
void respawn(coordinator_actor* self, worker_slot& slot) {
  auto& st = self->state;
  if (st.stopping || slot.running || slot.parked)
    return;
  std::size_t recovered = 0;
  if (slot.kind == worker_slot::role::consumer) {
    try {
      recovered = recover_lists_of(self, slot.name);
    } catch (const std::exception& e) {
      if (is_fenced(e)) {
        // Frozen past the lock's ttl: those lists may be the new holder's
        // business now. The slot stays parked until the lock is ours again.
        recovery_refused(self, slot.name + "'s processing lists", e);
        return;
      }
      // Retried every check interval while Redis is down: warn once.
      auto level = slot.recovery.failure_level(st.setup.clock());
      spdlog::log(level,
                  "coordinator {}: cannot restart {} until its in-flight "
                  "entries are recovered, retrying: {}",
                  st.setup.name_prefix, slot.name, e.what());
      auto position = static_cast<std::size_t>(&slot - st.slots.data());
      self->delayed_send(self, milliseconds(st.setup.check_interval_ms),
                         respawn_atom_v, position);
      return;
    }
  }
  auto old_name = slot.name;
  auto waited = slot.recovery.recovered(st.setup.clock());
  ++slot.restarts;
  ++slot.incarnation;
  try {
    start_worker(self, slot);
  } catch (const std::exception& e) {
    // No thread left to spawn it on (a memory limit): stop, not hang.
    stop(self, "cannot restart " + old_name + ": " + e.what());
    return;
  }
  std::string delay;
  if (waited)
    delay = ", after waiting " + std::to_string(waited->lasted_ms) +
            " ms for Redis";
  spdlog::info("coordinator {}: restarted {} as {} ({}{}; {} in-flight "
               "entries recovered)",
               st.setup.name_prefix, old_name, slot.name, slot.down_reason,
               delay, recovered);
  if (slot.kind == worker_slot::role::relay)
    tell_writer_relays(self);
}

/// Restarts a crashed relay or consumer under a new name, unless its
/// restart budget is spent.
void restart(coordinator_actor* self, worker_slot& slot,
             const caf::error& reason) {
  auto& st = self->state;
  auto& metrics = *st.setup.metrics;
  if (slot.restarts >= settings_of(self).run.restart_budget) {
    stop(self, slot.name + " crashed more than run.restart_budget (" +
                   std::to_string(settings_of(self).run.restart_budget) +
                   ") times; last: " + describe(self, reason));
    return;
  }
  // The restart line says why, once the new incarnation is up.
  slot.down_reason = describe(self, reason);
  spdlog::debug("coordinator {}: {} went down: {}", st.setup.name_prefix,
                slot.name, slot.down_reason);
  (slot.kind == worker_slot::role::relay ? metrics.relay_restarts
                                         : metrics.consumer_restarts)++;
  respawn(self, slot);
}

/// A worker that could not set itself up on the slot's first start: the
/// run stops (exit 1) instead of restarting it. What failed there (no file
/// descriptor, no thread, an unreadable database) fails the restarts alike,
/// and a run short of the workers it was asked for is not the run wanted.
bool first_start_failed(const worker_slot& slot, const caf::error& reason) {
  return slot.restarts == 0 && slot.incarnation == 0 &&
         has_code(reason, ec::setup_failed);
}

void on_down(coordinator_actor* self, const caf::down_msg& msg) {
  auto& st = self->state;
  if (st.alive > 0)
    --st.alive;
  if (msg.source == st.writer.address() || msg.source == st.load.address()) {
    bool writer_side = msg.source == st.writer.address();
    (writer_side ? st.writer : st.load) = caf::actor{};
    if (!st.stopping)
      stop(self, std::string{writer_side ? "writer" : "load generator"} +
                     " died: " + describe(self, msg.reason));
    finish_if_all_down(self);
    return;
  }
  for (auto& slot : st.slots) {
    if (slot.running && msg.source == slot.actor.address()) {
      slot.running = false;
      slot.actor = caf::actor{};
      if (has_code(msg.reason, ec::consumer_fenced))
        lose_consumers(self, "the fence refused " + slot.name);
      else if (first_start_failed(slot, msg.reason))
        stop(self,
             "cannot start " + slot.name + ": " + describe(self, msg.reason));
      else if (!st.stopping && !slot.parked)
        restart(self, slot, msg.reason);
      break;
    }
  }
  finish_if_all_down(self);
}

void check(coordinator_actor* self) {
  auto& st = self->state;
  st.setup.metrics->supervisor_checks++;
  if (st.stopping)
    return;
  keep_consumers(self);
  keep_relay_note(st);
  auto now = st.setup.clock();
  // Said once per stretch, bounded run or not: an unbounded run keeps
  // retrying, and this line is what tells the operator why nothing moves.
  if (auto refused = st.setup.metrics->refusals.standing_unannounced(now))
    spdlog::warn("coordinator {}: {}", st.setup.name_prefix,
                 refusal_text(*refused));
  bool progress_due = st.setup.progress &&
                      now - st.last_progress >= st.setup.progress_interval_ms;
  // The stores are counted in full to confirm a drain, to name what a
  // stalled run waits for, and for the progress line's counts, at most
  // every full_count_spacing times what the last count took. Otherwise
  // they are read lightly (drain_snapshot: whether any row is left, the
  // database's change mark, Redis's counts; constant time), which is all
  // the drain and stall rules need. Counting every row once a second cost
  // a relay-only run a fifth of its CPU, and grows with the outbox.
  st.paused_batches = st.setup.metrics->paused_batches.load();
  bool count_due = progress_due && now - st.last_full_read >=
                                       full_count_spacing * st.full_read_took;
  bool full = count_due;
  if (st.setup.until_drained || progress_due) {
    auto light = st.probe->drain_snapshot();
    // Counted in full once a second while a refusal churns the mark.
    bool marked = light.database_mark.has_value() && !refusal_met(st, now);
    if (marked)
      note_movement(st, light, now);
    if (st.setup.until_drained)
      full = full || full_read_due(st, now, marked) || drained(st, light);
    if (!full) {
      if (progress_due) {
        st.last_progress = now;
        st.last_known = between_counts(st, light);
        st.setup.progress(progress_of(st, st.last_known, now));
      }
      self->delayed_send(self, milliseconds(st.setup.check_interval_ms),
                         check_atom_v);
      return;
    }
  } else {
    self->delayed_send(self, milliseconds(st.setup.check_interval_ms),
                       check_atom_v);
    return;
  }
  auto snap = st.probe->snapshot();
  st.full_read_took = st.setup.clock() - now;
  st.last_full_read = now;
  st.last_known = with_last_known(snap, st.last_known);
  remember_count(st);
  note_movement(st, snap, now);
  if (progress_due) {
    st.last_progress = now;
    st.setup.progress(progress_of(st, st.last_known, now));
  }
  if (st.setup.until_drained && drained(st, snap)) {
    if (st.setup.progress && !progress_due)
      st.setup.progress(progress_of(st, snap, now));
    stop(self, "");
    return;
  }
  if (st.setup.until_drained) {
    if (auto why = stall_reason(st, snap, now); !why.empty()) {
      stop(self, why);
      return;
    }
  }
  self->delayed_send(self, milliseconds(st.setup.check_interval_ms),
                     check_atom_v);
}

worker_slot slot_of(worker_slot::role kind, int index) {
  worker_slot slot;
  slot.kind = kind;
  slot.index = index;
  return slot;
}

/// How long the load waits for the relays' first cycles at most.
constexpr int load_start_patience_ms = 5000;

/// Tells the load generator to start, once (the relays ready, or the
/// patience spent).
void start_load(coordinator_actor* self) {
  auto& st = self->state;
  if (st.load_started || !st.load || st.stopping)
    return;
  st.load_started = true;
  self->send(st.load, start_atom_v);
}

void start_children(coordinator_actor* self) {
  auto& st = self->state;
  const auto& s = settings_of(self);
  for (int i = 0; i < s.run.relays; ++i)
    st.slots.push_back(slot_of(worker_slot::role::relay, i));
  for (int i = 0; i < s.run.consumers; ++i)
    st.slots.push_back(slot_of(worker_slot::role::consumer, i));
  for (auto& slot : st.slots)
    if (slot.kind == worker_slot::role::relay)
      start_worker(self, slot);
  if (s.run.consumers > 0) {
    if (st.setup.consumer_lock_holder.empty())
      start_consumers(self);
    else
      keep_consumers(self);
  }
  spdlog::info("coordinator {}: started {} relays, {} consumers, {} orders "
               "to place",
               st.setup.name_prefix, s.run.relays, s.run.consumers,
               s.run.orders);
  if (s.run.orders > 0) {
    writer_setup ws{s.db, s.run.commit_batch, s.run.commit_delay_ms,
                    st.setup.clock, st.setup.metrics};
    st.writer = spawn_child(self, st.setup.detached, writer, std::move(ws));
    ++st.alive;
    tell_writer_relays(self);
    load_setup ls;
    ls.orders = s.run.orders;
    ls.followup_share = s.run.followup_share;
    ls.max_in_flight = s.run.max_in_flight;
    ls.orders_per_second = s.run.orders_per_second;
    ls.run_id = st.setup.name_prefix + "-" + std::to_string(st.setup.clock());
    ls.seed = s.crash.seed;
    ls.writer = st.writer;
    ls.report_to = self;
    ls.metrics = st.setup.metrics;
    // Cooperative: it only sends messages, never blocks.
    st.load = spawn_child(self, false, load_generator, std::move(ls));
    ++st.alive;
    // Once every relay has run its first cycle: orders placed while the
    // relays still connect and prepare their statements wait for them
    // (on PostgreSQL the first 200 orders of a paced run waited 80-90 ms,
    // the whole p99). Not for ever: a relay that cannot start is restarted
    // and counted in the report, and the load goes on without it.
    if (s.run.relays == 0)
      start_load(self);
    else
      self->delayed_send(self, milliseconds(load_start_patience_ms),
                         start_atom_v);
  } else {
    st.load_done = true;
  }
}

} // namespace

std::string worker_name(const std::string& prefix, worker_slot::role kind,
                        int index, int restarts) {
  return std::string{kind == worker_slot::role::relay ? "relay" : "consumer"} +
         "-" + prefix + "-" + std::to_string(index) + "-" +
         std::to_string(restarts);
}

caf::behavior coordinator(coordinator_actor* self, coordinator_setup setup) {
  auto& st = self->state;
  st.setup = std::move(setup);
  st.started_at = st.setup.clock();
  st.last_movement = st.started_at;
  // The first progress after one interval: a count at once would read the
  // whole backlog before the run has done anything to report.
  st.last_progress = st.started_at;
  st.rate_at = st.started_at;
  // A refusal counts as standing once it has come back for as long as the
  // stall rule waits: the same patience for both.
  st.setup.metrics->refusals.set_horizon(stall_timeout(st));
  st.setup.metrics->writer_refusals.set_horizon(stall_timeout(st));
  // Children are linked so they never outlive us; their exits are handled
  // through the monitor (down_msg), so exit messages from them are ignored.
  self->set_exit_handler([self](caf::exit_msg& msg) {
    if (msg.source == self->address() || !msg.reason)
      return;
    auto& st = self->state;
    // A child's exit can arrive after its down_msg (and after its slot was
    // given a new actor): remember every child ever spawned.
    bool from_child = st.children.count(msg.source) > 0;
    if (from_child)
      return;
    if (st.report) {
      self->quit(msg.reason);
      return;
    }
    stop_waiting(self);
    stop(self, "stopped from outside: " + describe(self, msg.reason));
  });
  self->set_down_handler([self](caf::down_msg& msg) { on_down(self, msg); });
  st.starting = true;
  try {
    st.probe = st.setup.make_probe();
    start_children(self);
  } catch (const std::exception& e) {
    spdlog::error("coordinator {}: cannot start: {}", st.setup.name_prefix,
                  e.what());
    st.failure = std::string{"cannot start: "} + e.what();
    stop(self, st.failure);
  }
  st.starting = false;
  self->send(self, check_atom_v);
  return {
      [self](run_atom) -> caf::result<std::string> {
        auto& st = self->state;
        st.run_request = self->make_response_promise();
        if (st.report) {
          st.run_request->deliver(*st.report);
          self->quit();
        }
        return caf::delegated<std::string>{};
      },
      [self](done_atom) { self->state.load_done = true; },
      [self](ready_atom) {
        auto& st = self->state;
        if (++st.relays_ready >= st.setup.settings.run.relays)
          start_load(self);
      },
      [self](start_atom) { start_load(self); },
      [self](check_atom) { check(self); },
      [self](final_read_atom) { retry_final_read(self); },
      [self](shutdown_atom) {
        if (self->state.report) {
          self->quit();
          return;
        }
        // Before it ended by itself: a bounded run reports what it left
        // undone (an unbounded run only ever ends this way).
        if (!self->state.stopping && self->state.setup.until_drained)
          self->state.interrupted = true;
        stop_waiting(self);
        stop(self, "");
      },
      [self](respawn_atom, std::size_t position) {
        auto& st = self->state;
        if (position < st.slots.size())
          respawn(self, st.slots[position]);
      },
  };
}

} // namespace outbox::actors
