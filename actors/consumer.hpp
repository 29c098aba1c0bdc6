#pragma once

#include "actors/consumer_core.hpp"
#include "actors/interfaces.hpp"

#include <caf/stateful_actor.hpp>

#include <memory>

namespace outbox::actors {

/// The consumer actor: consumer_core decides each step; this turns its
/// answer into the next pop message, a timer or the actor's exit.
struct consumer_state {
  static inline const char* name = "consumer";

  std::unique_ptr<consumer_core> core;
};

/// Its messages: consumer_actor (interfaces.hpp).
consumer_actor::behavior_type
consumer(consumer_actor::stateful_pointer<consumer_state> self,
         consumer_setup setup);

} // namespace outbox::actors
