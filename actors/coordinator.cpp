#include "actors/coordinator.hpp"

#include "actors/coordinator_children.hpp"
#include "actors/coordinator_consumers.hpp"
#include "actors/coordinator_report.hpp"
#include "actors/messages.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <chrono>

namespace outbox::actors {

namespace {

using std::chrono::milliseconds;

/// An exit reason as a log line shows it ("outbox: injected_crash ...").
std::string describe(coordinator_actor* self, const caf::error& reason) {
  // render() dereferences a null category on an empty error in CAF 0.17.
  return reason ? self->system().render(reason) : "normal exit";
}

worker_exit exit_of(coordinator_actor* self, const caf::error& reason) {
  worker_exit exit{ec::none, describe(self, reason)};
  for (auto code : {ec::consumer_fenced, ec::setup_failed})
    if (has_code(reason, code))
      exit.code = code;
  return exit;
}

/// Begins a graceful stop: every child gets an exit; the report follows
/// once all are down.
void stop(coordinator_actor* self, std::string failure) {
  auto& st = self->state;
  if (!st.begin_stop(std::move(failure)))
    return;
  if (st.load)
    self->send_exit(st.load, caf::exit_reason::user_shutdown);
  if (st.writer)
    self->send_exit(st.writer, caf::exit_reason::user_shutdown);
  for (std::size_t i = 0; i < st.slots.size(); ++i)
    if (st.slots[i].running)
      self->send_exit(st.workers[i], caf::exit_reason::user_shutdown);
  finish_if_all_down(self);
}

/// Starts the next incarnation of the slot at `position`, as the core says.
void respawn(coordinator_actor* self, std::size_t position) {
  auto& st = self->state;
  auto& slot = st.slots[position];
  auto plan = st.restart(slot);
  switch (plan.next) {
  case restart_next::what::nothing:
    return;
  case restart_next::what::lose_consumers:
    lose_consumers(self, plan.why);
    return;
  case restart_next::what::retry_later:
    self->delayed_send(self, milliseconds(plan.delay_ms), respawn_atom_v,
                       position);
    return;
  case restart_next::what::start:
    break;
  }
  try {
    start_worker(self, slot);
  } catch (const std::exception& e) {
    // No thread left to spawn it on (a memory limit): stop, not hang.
    stop(self, plan.why + ": " + e.what());
    return;
  }
  st.restarted(slot, plan);
  if (slot.kind == worker_slot::role::relay)
    tell_writer_relays(self);
}

void on_down(coordinator_actor* self, const caf::down_msg& msg) {
  auto& st = self->state;
  st.child_down();
  bool writer_side = msg.source == st.writer.address();
  if (writer_side || msg.source == st.load.address()) {
    if (writer_side)
      st.writer = nullptr;
    else
      st.load = nullptr;
    if (!st.stopping)
      stop(self, std::string{writer_side ? "writer" : "load generator"} +
                     " died: " + describe(self, msg.reason));
    finish_if_all_down(self);
    return;
  }
  for (std::size_t i = 0; i < st.slots.size(); ++i) {
    if (!st.slots[i].running || msg.source != st.workers[i].address())
      continue;
    st.workers[i] = caf::actor{};
    auto next = st.worker_down(st.slots[i], exit_of(self, msg.reason));
    if (next.next == down_next::what::lose_consumers)
      lose_consumers(self, next.why);
    else if (next.next == down_next::what::stop)
      stop(self, next.why);
    else if (next.next == down_next::what::restart)
      respawn(self, i);
    break;
  }
  finish_if_all_down(self);
}

void check(coordinator_actor* self) {
  auto& st = self->state;
  st.setup.metrics->supervisor_checks++;
  if (st.stopping)
    return;
  keep_consumers(self);
  auto next = st.check();
  if (next.next == check_next::what::stop)
    stop(self, next.why);
  else
    self->delayed_send(self, milliseconds(next.delay_ms), check_atom_v);
}

} // namespace

coordinator_handle::behavior_type coordinator(coordinator_actor* self,
                                              coordinator_setup setup) {
  auto& st = self->state;
  st.begin(std::move(setup));
  // Children are linked so they never outlive us; their exits are handled
  // through the monitor (down_msg), so exit messages from them are ignored.
  self->set_exit_handler([self](caf::exit_msg& msg) {
    if (msg.source == self->address() || !msg.reason)
      return;
    auto& st = self->state;
    // A child's exit can arrive after its down_msg (and after its slot was
    // given a new actor): remember every child ever spawned.
    if (st.children.count(msg.source) > 0)
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
      [self](shutdown_atom) {
        auto& st = self->state;
        if (st.report) {
          self->quit();
          return;
        }
        // Before it ended by itself: a bounded run reports what it left
        // undone (an unbounded run only ever ends this way).
        if (!st.stopping && st.setup.until_drained)
          st.interrupted = true;
        stop_waiting(self);
        stop(self, "");
      },
      [self](done_atom) { self->state.load_done = true; },
      [self](ready_atom) {
        if (self->state.relay_ready())
          start_load(self);
      },
      [self](start_atom) { start_load(self); },
      [self](check_atom) { check(self); },
      [self](final_read_atom) { retry_final_read(self); },
      [self](respawn_atom, std::size_t position) {
        if (position < self->state.slots.size())
          respawn(self, position);
      },
  };
}

} // namespace outbox::actors
