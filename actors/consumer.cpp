#include "actors/consumer.hpp"

#include "actors/messages.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <chrono>
#include <exception>
#include <memory>
#include <utility>

namespace outbox::actors {

namespace {

using consumer_self = consumer_actor::stateful_pointer<consumer_state>;

/// Carries out what the core decided after a step.
void carry_out(consumer_self self, const consumer_next& next) {
  switch (next.next) {
  case consumer_next::what::step_now:
    self->send(self, pop_atom_v);
    break;
  case consumer_next::what::step_later:
    self->delayed_send(self, std::chrono::milliseconds(next.delay_ms),
                       pop_atom_v);
    break;
  case consumer_next::what::stop:
    self->quit(caf::make_error(next.reason, self->state.core->name()));
    break;
  }
}

} // namespace

consumer_actor::behavior_type
consumer(consumer_actor::stateful_pointer<consumer_state> self,
         consumer_setup setup) {
  auto& core = self->state.core;
  core = std::make_unique<consumer_core>(std::move(setup));
  auto start = core->start();
  if (start.result == consumer_start::how::failed) {
    self->quit(caf::make_error(ec::setup_failed, core->name(), start.why));
    return consumer_actor::behavior_type::make_empty_behavior();
  }
  self->set_exception_handler([self](std::exception_ptr& eptr) -> caf::error {
    try {
      std::rethrow_exception(eptr);
    } catch (const std::exception& e) {
      spdlog::warn("consumer {}: failed unexpectedly: {}",
                   self->state.core->name(), e.what());
    }
    return caf::make_error(ec::broker_unavailable, self->state.core->name());
  });
  if (start.result == consumer_start::how::idle)
    return {[](pop_atom) {}};
  self->send(self, pop_atom_v);
  return {
      [self](pop_atom) { carry_out(self, self->state.core->step()); },
  };
}

} // namespace outbox::actors
