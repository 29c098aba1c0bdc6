#pragma once

// The coordinator's children: the relays and consumers of its slots, the
// writer and the load generator, each spawned linked (it dies with the
// coordinator) and monitored (the coordinator sees it go down), and what
// they are told as the run goes: the relays the writer nudges, the load's
// start.

#include "actors/coordinator.hpp"

namespace outbox::actors {

/// Spawns the current incarnation of a slot, named for it.
void start_worker(coordinator_actor* self, worker_slot& slot);

/// Spawns the relays, the consumers (once the consumers' lock is held, if
/// one is used), and the writer and load generator when the run places
/// orders. Throws what a spawn or the first recovery throws.
void start_children(coordinator_actor* self);

/// Tells the writer the relays to nudge after every commit: every live one.
void tell_writer_relays(coordinator_actor* self);

/// Tells the load generator to start, once (the relays ready, or the
/// patience spent).
void start_load(coordinator_actor* self);

} // namespace outbox::actors
