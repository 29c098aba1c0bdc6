#pragma once

#include "lab/coordinator.hpp"

#include <cstdint>
#include <functional>
#include <string>

namespace outbox::lab {

/// A number in the steps' messages and files (short: they build many).
inline std::string str(std::int64_t n) {
  return std::to_string(n);
}

/// Starts one step of the lab; it calls lab_step_done or lab_fail when it
/// is over (possibly much later, from a message handler).
void run_lab_step(lab_coordinator_actor* self, lab_step step);

/// Runs one real relay until nothing is PENDING or SENDING (saying why when
/// it must wait for another relay's lease), stops it, then runs `then`.
void lab_relay_until_drained(lab_coordinator_actor* self,
                             std::function<void()> then);

// The delivery steps (lab/delivery_steps.cpp).

/// relay_crash: a new order; a relay that dies after publishing; the
/// takeover that publishes it again; atleastonce.out.
void lab_relay_crash(lab_coordinator_actor* self);

/// consumer: drains outbox.events through the inbox (dedup by event_id).
void lab_consumer(lab_coordinator_actor* self);

/// report: report.txt's four lines from the real stores.
void lab_report(lab_coordinator_actor* self);

} // namespace outbox::lab
