#pragma once

#include "actors/interfaces.hpp"
#include "actors/relay_core.hpp"

#include <caf/actor.hpp>
#include <caf/stateful_actor.hpp>

#include <cstdint>
#include <memory>

namespace outbox::actors {

/// The relay actor: relay_core decides each cycle; this turns its answer
/// into the next claim message, a timer or the actor's exit, and keeps
/// the claim messages from doubling the loop.
struct relay_state {
  static inline const char* name = "relay";

  std::unique_ptr<relay_core> core;
  /// Told `ready` once this relay's first claim cycle has run, so that a
  /// run's load starts on relays that are running (docs/run.md). Empty:
  /// nobody is told.
  ready_listener_actor report_to;
  /// report_to was told.
  bool told_ready = false;
  /// Bumped whenever a new claim is scheduled; older claim messages are
  /// stale and ignored, so nudges and timers never double the loop.
  std::uint64_t generation = 0;
  /// A claim message for the current generation is already in the mailbox.
  bool claim_queued = false;
};

/// Its messages: relay_actor (interfaces.hpp). `report_to` is told
/// `ready` after the first cycle (empty: nobody).
relay_actor::behavior_type
relay(relay_actor::stateful_pointer<relay_state> self, relay_setup setup,
      ready_listener_actor report_to);

} // namespace outbox::actors
