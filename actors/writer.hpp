#pragma once

#include "actors/interfaces.hpp"
#include "actors/writer_core.hpp"
#include "actors/writer_reply.hpp"

#include <caf/actor.hpp>
#include <caf/stateful_actor.hpp>

#include <memory>
#include <vector>

namespace outbox::actors {

/// The writer actor: writer_core decides (the group, its commit, the
/// answers); this keeps who is owed an answer and turns the core's plan
/// into messages and timers. Relays are nudged after every commit.
struct writer_state {
  static inline const char* name = "writer";

  std::unique_ptr<writer_core> core;
  /// Who is owed an answer, in the order their requests joined the core's
  /// group: the core's outcomes line up with them.
  std::vector<reply_to<order_receipt>> orders;
  std::vector<reply_to<event_receipt>> events;
  std::vector<relay_actor> relays;
};

/// Its messages: writer_actor (interfaces.hpp).
writer_actor::behavior_type
writer(writer_actor::stateful_pointer<writer_state> self, writer_setup setup);

} // namespace outbox::actors
