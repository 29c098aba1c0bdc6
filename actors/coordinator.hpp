#pragma once

#include "actors/coordinator_core.hpp"
#include "actors/interfaces.hpp"

#include <caf/actor.hpp>
#include <caf/actor_addr.hpp>
#include <caf/fwd.hpp>
#include <caf/response_promise.hpp>
#include <caf/stateful_actor.hpp>

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace outbox::actors {

/// The coordinator: spawns and monitors the writer, load generator, relays
/// and consumers; restarts a crashed relay or consumer under a new name
/// (recovering a dead consumer's processing list first) within the restart
/// budget; decides when a bounded run is done; answers run_atom with the
/// report JSON once everything has stopped. coordinator_core decides; this
/// adds the children's handles and who waits for the report.
struct coordinator_state : coordinator_core {
  static inline const char* name = "coordinator";

  writer_actor writer;
  load_generator_actor load;
  /// The actor of each slot's current incarnation, at the slot's position
  /// (empty while it is down). Relays and consumers alike.
  std::vector<caf::actor> workers;
  std::optional<caf::response_promise> run_request;
  std::optional<std::string> report;
  /// Every child ever spawned (exit messages from them are expected).
  std::set<caf::actor_addr> children;
};

/// The coordinator's self: what its helpers (coordinator_consumers,
/// coordinator_report) are given.
using coordinator_actor = coordinator_handle::stateful_base<coordinator_state>;

/// Its messages: coordinator_handle (interfaces.hpp).
coordinator_handle::behavior_type coordinator(coordinator_actor* self,
                                              coordinator_setup setup);

} // namespace outbox::actors
