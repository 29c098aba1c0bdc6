#include "actors/coordinator_children.hpp"

#include "actors/consumer.hpp"
#include "actors/coordinator_consumers.hpp"
#include "actors/load_generator.hpp"
#include "actors/messages.hpp"
#include "actors/relay.hpp"
#include "actors/writer.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <chrono>

namespace outbox::actors {

namespace {

using std::chrono::milliseconds;

/// Spawns a child linked (it dies with us) and monitored (we see it die),
/// on its own thread when `detached`.
template <class F, class... Ts>
auto spawn_child(coordinator_actor* self, bool detached, F fun, Ts&&... xs) {
  auto child = detached
                   ? self->spawn<caf::detached + caf::linked + caf::monitored>(
                         fun, std::forward<Ts>(xs)...)
                   : self->spawn<caf::linked + caf::monitored>(
                         fun, std::forward<Ts>(xs)...);
  self->state.children.insert(child.address());
  return child;
}

} // namespace

void tell_writer_relays(coordinator_actor* self) {
  auto& st = self->state;
  if (!st.writer)
    return;
  std::vector<relay_actor> relays;
  for (std::size_t i = 0; i < st.slots.size(); ++i)
    if (st.slots[i].kind == worker_slot::role::relay && st.slots[i].running)
      relays.push_back(caf::actor_cast<relay_actor>(st.workers[i]));
  self->send(st.writer, relays_atom_v, std::move(relays));
}

void start_worker(coordinator_actor* self, worker_slot& slot) {
  auto& st = self->state;
  const auto& s = st.setup.settings;
  auto& actor = st.workers[static_cast<std::size_t>(&slot - st.slots.data())];
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
    // The slots hold relays and consumers alike.
    actor = caf::actor_cast<caf::actor>(
        spawn_child(self, st.setup.detached, relay, std::move(rs),
                    ready_listener_actor{self}));
  } else {
    actor = caf::actor_cast<caf::actor>(spawn_child(
        self, st.setup.detached, consumer, st.consumer_setup_for(slot)));
  }
  st.started(slot);
}

namespace {

/// How long the load waits for the relays' first cycles at most.
constexpr int load_start_patience_ms = 5000;

} // namespace

void start_load(coordinator_actor* self) {
  auto& st = self->state;
  if (st.start_load(static_cast<bool>(st.load)))
    self->send(st.load, start_atom_v);
}

namespace {

/// The writer and the load generator, when the run places orders.
void start_load_side(coordinator_actor* self) {
  auto& st = self->state;
  const auto& s = st.setup.settings;
  st.writer =
      spawn_child(self, st.setup.detached, writer, st.writer_setup_of());
  ++st.alive;
  tell_writer_relays(self);
  load_setup ls;
  ls.orders = s.run.orders;
  ls.followup_share = s.run.followup_share;
  ls.max_in_flight = s.run.max_in_flight;
  ls.orders_per_second = s.run.orders_per_second;
  ls.run_id = st.run_id();
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
}

} // namespace

void start_children(coordinator_actor* self) {
  auto& st = self->state;
  const auto& s = st.setup.settings;
  st.plan_slots();
  st.workers.resize(st.slots.size());
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
  if (s.run.orders > 0)
    start_load_side(self);
  else
    st.load_done = true;
}

} // namespace outbox::actors
