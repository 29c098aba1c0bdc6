#include "lab/coordinator.hpp"

#include "actors/consumer.hpp"
#include "actors/messages.hpp"
#include "actors/writer.hpp"
#include "adapters/redis_ports.hpp"
#include "lab/steps.hpp"
#include "metrics/run_metrics.hpp"
#include "storage/types.hpp"

#include <caf/all.hpp>

#include <chrono>

namespace outbox::lab {

// The lab drives the pipeline's own actors and messages.
using namespace outbox::actors;

namespace {

using std::chrono::milliseconds;

/// Children die with us (linked) and we see them die (monitored); they
/// block on SQLite and Redis, so each gets its own thread unless the setup
/// says the caller's scheduler runs them.
template <class F, class... Ts>
caf::actor spawn_child(lab_coordinator_actor* self, F fun, Ts&&... xs) {
  ++self->state.alive;
  // The writer, relay and consumer are typed (actors/interfaces.hpp); the
  // lab holds every child alike.
  if (self->state.setup.detached)
    return caf::actor_cast<caf::actor>(
        self->spawn<caf::detached + caf::linked + caf::monitored>(
            fun, std::forward<Ts>(xs)...));
  return caf::actor_cast<caf::actor>(
      self->spawn<caf::linked + caf::monitored>(fun, std::forward<Ts>(xs)...));
}

std::string child_name(lab_coordinator_actor* self, const char* role) {
  auto& st = self->state;
  return std::string{"lab-"} + role + "-" + st.setup.name_prefix + "-" +
         std::to_string(++st.spawned);
}

void schedule_check(lab_coordinator_actor* self, int delay_ms) {
  auto& st = self->state;
  if (st.check_queued)
    return;
  st.check_queued = true;
  if (delay_ms == 0)
    self->send(self, check_atom_v);
  else
    self->delayed_send(self, milliseconds(delay_ms), check_atom_v);
}

void check(lab_coordinator_actor* self) {
  auto& st = self->state;
  st.check_queued = false;
  if (!st.until || st.finished)
    return;
  bool reached = false;
  try {
    reached = st.until();
  } catch (const std::exception& e) {
    lab_fail(self,
             std::string{"step "} + to_string(st.current) + ": " + e.what());
    return;
  }
  if (reached) {
    auto then = std::move(st.then);
    st.until = nullptr;
    st.then = nullptr;
    lab_guard(self, then);
    return;
  }
  if (lab_now(self) > st.deadline) {
    lab_fail(self, std::string{"step "} + to_string(st.current) +
                       ": gave up after " +
                       std::to_string(st.setup.step_timeout_ms / 1000) +
                       " s waiting for " + st.waiting_for);
    return;
  }
  schedule_check(self, st.setup.check_interval_ms);
}

/// Answers run_atom and ends the coordinator; children are down by now.
/// Without a request yet, it waits for one (the run_atom handler ends it).
void finish(lab_coordinator_actor* self) {
  auto& st = self->state;
  st.finished = true;
  if (st.result_request) {
    st.result_request->deliver(st.failure);
    st.result_request.reset();
    self->quit();
  }
}

void start_next_step(lab_coordinator_actor* self) {
  auto& st = self->state;
  if (!st.failure.empty() || st.next_step >= st.setup.plan.size()) {
    lab_stop_children(self, [self] { finish(self); });
    return;
  }
  st.current = st.setup.plan[st.next_step++];
  st.event_id.clear();
  st.aggregate_id.clear();
  st.before = 0;
  st.told_waiting = false;
  if (st.setup.plan.size() > 1)
    lab_say(self, "");
  lab_say(self, "== " + std::string{to_string(st.current)} +
                    (st.setup.plan.size() > 1
                         ? " (" + std::to_string(st.next_step) + "/" +
                               std::to_string(st.setup.plan.size()) + ")"
                         : std::string{}) +
                    " ==");
  lab_guard(self, [self] { run_lab_step(self, self->state.current); });
}

/// Which child a message came from; nullptr if none of ours.
caf::actor* child_of(lab_coordinator_state& st, const caf::actor_addr& who) {
  for (auto* child : {&st.writer, &st.relay, &st.consumer})
    if (*child && child->address() == who)
      return child;
  return nullptr;
}

bool is_injected_crash(const caf::error& reason) {
  return has_code(reason, ec::injected_crash);
}

void on_down(lab_coordinator_actor* self, const caf::down_msg& msg) {
  auto& st = self->state;
  auto* child = child_of(st, msg.source);
  if (child == nullptr)
    return;
  if (st.alive > 0)
    --st.alive;
  bool relay = child == &st.relay;
  auto what = child == &st.writer ? "writer" : relay ? "relay" : "consumer";
  *child = caf::actor{};
  if (relay && st.crash_expected && is_injected_crash(msg.reason)) {
    st.crash_expected = false;
    st.crash_seen = true;
  } else if (!st.after_stop && !st.finished) {
    lab_fail(self, std::string{"the "} + what + " died during step " +
                       to_string(st.current) + ": " +
                       self->system().render(msg.reason));
  }
  if (st.alive == 0 && st.after_stop) {
    auto then = std::move(st.after_stop);
    st.after_stop = nullptr;
    lab_guard(self, then);
  }
}

} // namespace

lab_view& view(lab_coordinator_actor* self) {
  return *self->state.view;
}

storage::millis lab_now(lab_coordinator_actor* self) {
  return self->state.setup.clock();
}

void lab_say(lab_coordinator_actor* self, const std::string& line) {
  if (self->state.setup.say)
    self->state.setup.say(line);
}

void lab_guard(lab_coordinator_actor* self,
               const std::function<void()>& step_body) {
  try {
    step_body();
  } catch (const std::exception& e) {
    lab_fail(self, std::string{"step "} + to_string(self->state.current) +
                       ": " + e.what());
  }
}

void lab_fail(lab_coordinator_actor* self, const std::string& why) {
  auto& st = self->state;
  if (st.finished)
    return;
  if (st.failure.empty())
    st.failure = why;
  st.until = nullptr;
  st.then = nullptr;
  st.crash_expected = false;
  lab_stop_children(self, [self] { finish(self); });
}

void lab_wait_until(lab_coordinator_actor* self, std::string what,
                    std::function<bool()> until, std::function<void()> then) {
  auto& st = self->state;
  st.waiting_for = std::move(what);
  st.until = std::move(until);
  st.then = std::move(then);
  st.deadline = lab_now(self) + st.setup.step_timeout_ms;
  schedule_check(self, 0);
}

void lab_stop_children(lab_coordinator_actor* self,
                       std::function<void()> then) {
  auto& st = self->state;
  st.after_stop = std::move(then);
  for (auto* child : {&st.writer, &st.relay, &st.consumer})
    if (*child)
      self->send_exit(*child, caf::exit_reason::user_shutdown);
  if (st.alive == 0) {
    auto next = std::move(st.after_stop);
    st.after_stop = nullptr;
    lab_guard(self, next);
  }
}

void lab_step_done(lab_coordinator_actor* self) {
  lab_stop_children(self, [self] { start_next_step(self); });
}

void lab_spawn_writer(lab_coordinator_actor* self, clock_function clock) {
  auto& st = self->state;
  const auto& s = st.setup.settings;
  writer_setup ws{s.db, s.run.commit_batch, s.run.commit_delay_ms,
                  std::move(clock), std::make_shared<metrics::run_metrics>()};
  st.writer = spawn_child(self, writer, std::move(ws));
}

void lab_spawn_relay(lab_coordinator_actor* self, bool crash_after_publish) {
  auto& st = self->state;
  const auto& s = st.setup.settings;
  relay_setup rs;
  rs.name = child_name(self, crash_after_publish ? "crashing-relay" : "relay");
  rs.db = s.db;
  rs.lease = s.lease;
  rs.poll_interval_ms = s.run.poll_interval_ms;
  rs.idle_poll_max_ms = s.run.idle_poll_max_ms;
  if (crash_after_publish)
    rs.crash.relay_after_publish = 1.0;
  rs.make_publisher = [s] {
    return adapters::make_redis_publish_port(s.redis, s.broker);
  };
  rs.clock = st.setup.clock;
  rs.monotonic = st.setup.monotonic;
  rs.metrics = std::make_shared<metrics::run_metrics>();
  st.relay_name = rs.name;
  st.crash_expected = crash_after_publish;
  st.crash_seen = false;
  st.relay =
      spawn_child(self, relay, std::move(rs), actors::ready_listener_actor{});
}

void lab_spawn_consumer(lab_coordinator_actor* self) {
  auto& st = self->state;
  const auto& s = st.setup.settings;
  consumer_setup cs;
  cs.name = child_name(self, "consumer");
  cs.names = s.broker;
  cs.queues = {s.broker.queue};
  cs.block_ms = s.run.consumer_block_ms;
  cs.make_port = [s] {
    return adapters::make_redis_consume_port(s.redis, s.broker);
  };
  cs.clock = st.setup.clock;
  cs.metrics = std::make_shared<metrics::run_metrics>();
  st.consumer = spawn_child(self, consumer, std::move(cs));
}

caf::behavior lab_coordinator(lab_coordinator_actor* self, lab_setup setup) {
  auto& st = self->state;
  st.setup = std::move(setup);
  st.view = std::make_unique<lab_view>(st.setup.settings, st.setup.files);
  // Children's exits arrive through the link too: their deaths are handled
  // as down messages, so only an exit from outside stops the lab.
  self->set_exit_handler([self](caf::exit_msg& msg) {
    if (msg.source == self->address() || !msg.reason ||
        child_of(self->state, msg.source) != nullptr)
      return;
    lab_fail(self,
             "stopped from outside: " + self->system().render(msg.reason));
  });
  self->set_down_handler([self](caf::down_msg& msg) { on_down(self, msg); });
  self->set_exception_handler([self](std::exception_ptr& eptr) -> caf::error {
    // CAF ends the actor after this handler: answer first, and take the
    // children down with a non-normal reason.
    auto& st = self->state;
    try {
      std::rethrow_exception(eptr);
    } catch (const std::exception& e) {
      if (st.failure.empty())
        st.failure = e.what();
    } catch (...) {
      if (st.failure.empty())
        st.failure = "unknown exception";
    }
    if (st.result_request)
      st.result_request->deliver(st.failure);
    st.result_request.reset();
    st.finished = true;
    return caf::make_error(ec::store_failure, st.failure);
  });
  self->send(self, start_atom_v);
  return {
      [self](start_atom) {
        auto& st = self->state;
        if (st.setup.reset_first)
          lab_guard(self, [self] {
            lab_say(self, "Resetting the lab to a clean state:");
            for (const auto& line : self->state.view->reset())
              lab_say(self, "  " + line);
          });
        if (st.failure.empty())
          start_next_step(self);
      },
      [self](check_atom) { check(self); },
      [self](run_atom) -> caf::result<std::string> {
        auto& st = self->state;
        st.result_request = self->make_response_promise();
        if (st.finished)
          finish(self);
        return caf::delegated<std::string>{};
      },
  };
}

} // namespace outbox::lab
