#include "actors/consumer.hpp"

#include "actors/messages.hpp"
#include "broker/broker_error.hpp"
#include "broker/entry.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

namespace outbox::actors {

namespace {

using std::chrono::milliseconds;

void crash(consumer_actor* self, const char* point) {
  self->state.setup.metrics->injected_crashes++;
  spdlog::info("consumer {} crashes (injected, {})", self->state.setup.name,
               point);
  self->quit(caf::make_error(ec::injected_crash, self->state.setup.name));
}

/// Commit-to-processed latency, from the committed_at the relay copied into
/// the entry.
void record_latency(consumer_state& st, const std::string& entry) {
  auto decoded = broker::decode(entry);
  if (auto* e = std::get_if<broker::event_entry>(&decoded))
    if (e->committed_at > 0)
      st.setup.metrics->commit_to_processed.record(
          static_cast<double>(st.setup.clock() - e->committed_at));
}

/// Applies one popped entry. Returns false if the consumer crashed.
bool handle(consumer_actor* self, const std::string& processing,
            const std::string& entry) {
  auto& st = self->state;
  auto& metrics = *st.setup.metrics;
  if (st.crashes->strikes(crash_point::consumer_after_pop)) {
    crash(self, "after pop");
    return false;
  }
  auto applied = st.port->apply(entry);
  switch (applied.result) {
  case broker::applied_entry::outcome::applied:
    metrics.applied++;
    if (applied.order_violation)
      metrics.order_violations++;
    record_latency(st, entry);
    break;
  case broker::applied_entry::outcome::duplicate:
    metrics.duplicates_absorbed++;
    break;
  case broker::applied_entry::outcome::dead_lettered:
    metrics.dead_lettered++;
    spdlog::warn("consumer {}: dead-lettered an entry: {}", st.setup.name,
                 applied.reason);
    break;
  }
  if (st.crashes->strikes(crash_point::consumer_after_effect)) {
    crash(self, "after effect, before remove");
    return false;
  }
  st.port->remove(processing, entry);
  return true;
}

/// Puts entries left in our processing lists back at the head of their
/// queues. Only this consumer reads those queues, so order is kept.
void recover_own(consumer_actor* self) {
  auto& st = self->state;
  for (const auto& queue : st.setup.queues)
    st.setup.metrics->recovered_entries +=
        static_cast<std::int64_t>(st.port->recover(
            st.setup.names.processing_for(queue, st.setup.name), queue));
  st.must_recover = false;
}

enum class burst_result { crashed, busy, idle };

/// Takes up to `burst` entries round-robin over the owned queues; blocks
/// briefly on one queue when all are empty.
burst_result burst(consumer_actor* self) {
  auto& st = self->state;
  auto& queues = st.setup.queues;
  int handled = 0;
  std::size_t empty_in_a_row = 0;
  while (handled < st.setup.burst && empty_in_a_row < queues.size()) {
    const auto& queue = queues[st.next_queue];
    st.next_queue = (st.next_queue + 1) % queues.size();
    auto processing = st.setup.names.processing_for(queue, st.setup.name);
    auto entry = st.port->pop(queue, processing, 0);
    if (!entry) {
      ++empty_in_a_row;
      continue;
    }
    empty_in_a_row = 0;
    ++handled;
    if (!handle(self, processing, *entry))
      return burst_result::crashed;
  }
  if (handled > 0)
    return burst_result::busy;
  const auto& queue = queues[st.next_queue];
  auto processing = st.setup.names.processing_for(queue, st.setup.name);
  auto entry = st.port->pop(queue, processing, st.setup.block_ms);
  if (!entry)
    return burst_result::idle;
  return handle(self, processing, *entry) ? burst_result::busy
                                          : burst_result::crashed;
}

} // namespace

caf::behavior consumer(consumer_actor* self, consumer_setup setup) {
  auto& st = self->state;
  st.setup = std::move(setup);
  st.crashes = std::make_unique<crash_injector>(st.setup.crash, st.setup.name);
  try {
    st.port = st.setup.make_port();
  } catch (const std::exception& e) {
    spdlog::error("consumer {} cannot start: {}", st.setup.name, e.what());
    self->quit(caf::make_error(ec::broker_unavailable, st.setup.name));
    return {};
  }
  self->set_exception_handler([self](std::exception_ptr& eptr) -> caf::error {
    try {
      std::rethrow_exception(eptr);
    } catch (const std::exception& e) {
      spdlog::error("consumer {} failed: {}", self->state.setup.name, e.what());
    }
    return caf::make_error(ec::broker_unavailable, self->state.setup.name);
  });
  if (st.setup.queues.empty()) {
    // More consumers than partitions: nothing to own. Stay up, idle, so the
    // run's shape is what the user asked for.
    spdlog::warn("consumer {} owns no partition (more consumers than "
                 "broker.partitions)",
                 st.setup.name);
    return {[](pop_atom) {}};
  }
  self->send(self, pop_atom_v);
  return {
      [self](pop_atom) {
        auto& st = self->state;
        try {
          if (st.must_recover)
            recover_own(self);
          auto result = burst(self);
          st.retry_delay_ms = 0;
          if (result == burst_result::busy)
            self->send(self, pop_atom_v);
          else if (result == burst_result::idle)
            // The blocking pop already waited; the tiny delay only keeps an
            // empty queue from spinning where pops cannot block (tests).
            self->delayed_send(self, milliseconds(1), pop_atom_v);
        } catch (const broker::broker_error& e) {
          st.setup.metrics->consumer_errors++;
          st.must_recover = true;
          st.retry_delay_ms = std::clamp(st.retry_delay_ms * 2, 50, 2000);
          spdlog::warn("consumer {}: Redis trouble, retrying in {} ms: {}",
                       st.setup.name, st.retry_delay_ms, e.what());
          self->delayed_send(self, milliseconds(st.retry_delay_ms), pop_atom_v);
        }
      },
  };
}

} // namespace outbox::actors
