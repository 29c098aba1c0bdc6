#include "actors/relay.hpp"

#include "actors/messages.hpp"

#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <chrono>
#include <exception>
#include <memory>
#include <utility>

namespace outbox::actors {

namespace {

using relay_self = relay_actor::stateful_pointer<relay_state>;

/// Schedules the next cycle after `delay_ms` (0: at once).
void schedule_claim(relay_self self, storage::millis delay_ms) {
  auto& st = self->state;
  auto gen = ++st.generation;
  st.claim_queued = delay_ms == 0;
  if (delay_ms == 0)
    self->send(self, claim_atom_v, gen);
  else
    self->delayed_send(self, std::chrono::milliseconds(delay_ms), claim_atom_v,
                       gen);
}

/// Carries out what the core decided.
void carry_out(relay_self self, const relay_next& next) {
  switch (next.next) {
  case relay_next::what::claim_now:
    schedule_claim(self, 0);
    break;
  case relay_next::what::claim_later:
    schedule_claim(self, next.delay_ms);
    break;
  case relay_next::what::pause:
    self->delayed_send(self, std::chrono::milliseconds(next.delay_ms),
                       resume_atom_v);
    break;
  case relay_next::what::stop:
    self->quit(caf::make_error(next.reason, self->state.core->name()));
    break;
  }
}

} // namespace

relay_actor::behavior_type relay(relay_self self, relay_setup setup,
                                 ready_listener_actor report_to) {
  auto& st = self->state;
  st.core = std::make_unique<relay_core>(std::move(setup));
  st.report_to = std::move(report_to);
  auto start = st.core->start();
  if (!start.started) {
    self->quit(caf::make_error(ec::setup_failed, st.core->name(), start.why));
    return relay_actor::behavior_type::make_empty_behavior();
  }
  self->set_exit_handler([self](caf::exit_msg& msg) {
    self->state.core->shutdown();
    self->quit(msg.reason);
  });
  self->set_exception_handler([self](std::exception_ptr& eptr) -> caf::error {
    try {
      std::rethrow_exception(eptr);
    } catch (const std::exception& e) {
      spdlog::warn("relay {}: failed unexpectedly: {}",
                   self->state.core->name(), e.what());
    }
    return caf::make_error(ec::store_failure, self->state.core->name());
  });
  schedule_claim(self, 0);
  return {
      [self](claim_atom, std::uint64_t gen) {
        auto& st = self->state;
        if (gen != st.generation || st.core->paused())
          return;
        st.claim_queued = false;
        carry_out(self, st.core->cycle());
        if (!st.told_ready && st.report_to) {
          st.told_ready = true;
          self->send(st.report_to, ready_atom_v);
        }
      },
      [self](nudge_atom) {
        auto& st = self->state;
        if (!st.claim_queued && !st.core->paused())
          schedule_claim(self, 0);
      },
      [self](resume_atom) {
        if (auto next = self->state.core->resume())
          carry_out(self, *next);
      },
  };
}

} // namespace outbox::actors
