#pragma once

// The actors' interfaces, a caf::typed_actor each, with every message it
// handles and what it answers: the compiler checks each behavior, and each
// typed send, against them. Their decisions live in plain classes
// (consumer_core, writer_core, relay_core, coordinator_core); the actors
// only translate messages and timers.

#include "actors/messages.hpp"

#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace outbox::actors {

/// A relay: claims, publishes and acks outbox rows, a batch per cycle.
using relay_actor = caf::typed_actor<
    /// To itself: (claim, generation) runs one cycle, unless a newer claim
    /// was scheduled since (a stale timer or nudge) or a batch is held
    /// across an injected pause.
    caf::reacts_to<claim_atom, std::uint64_t>,
    /// From the writer after a commit: claim now, unless a claim is
    /// already queued or the relay is paused.
    caf::reacts_to<nudge_atom>,
    /// To itself, after an injected pause: publish the batch it held.
    caf::reacts_to<resume_atom>>;

/// Who hears that a relay's first claim cycle has run: the coordinator (its
/// handle converts to this one), so that a run's load starts on relays
/// that are at work.
using ready_listener_actor = caf::typed_actor<
    /// From a relay: its first claim cycle has run.
    caf::reacts_to<ready_atom>>;

/// The writer: group-commits orders and follow-up events.
using writer_actor = caf::typed_actor<
    /// (place, request_id or "", sku, qty): places one order, answered
    /// once its group committed (or refused: idempotency_conflict,
    /// invalid_input at once, store_* for the group).
    caf::replies_to<place_atom, std::string, std::string,
                    std::int64_t>::with<order_receipt>,
    /// (append, aggregate_id, event_type, payload JSON): appends one
    /// follow-up event, answered as place.
    caf::replies_to<append_atom, std::string, std::string,
                    std::string>::with<event_receipt>,
    /// Many orders in one message: one outcome per ticket, in order, each
    /// as place would have answered it.
    caf::replies_to<place_batch_atom, std::vector<order_ticket>>::with<
        std::vector<order_outcome>>,
    /// Many follow-ups in one message: one outcome per ticket, in order.
    caf::replies_to<append_batch_atom, std::vector<event_ticket>>::with<
        std::vector<event_outcome>>,
    /// To itself: (commit, generation) commits the gathered group, unless
    /// the group of that generation has committed already.
    caf::reacts_to<commit_atom, std::uint64_t>,
    /// From the coordinator: the relays to nudge after every commit.
    caf::reacts_to<relays_atom, std::vector<relay_actor>>>;

/// A consumer: pops, applies and removes batches of its queues' entries.
using consumer_actor = caf::typed_actor<
    /// To itself: take the next batch (or wait for one, or retry after
    /// trouble).
    caf::reacts_to<pop_atom>>;

/// Who hears that a load generator is done: the coordinator (its handle
/// converts to this one), or a bench stage waiting for the load.
using load_listener_actor = caf::typed_actor<
    /// From the load generator: every order and follow-up is committed.
    caf::reacts_to<done_atom>>;

/// The load generator: drives the writer like a shop front would.
using load_generator_actor = caf::typed_actor<
    /// From the coordinator: start placing orders.
    caf::reacts_to<start_atom>,
    /// To itself: a paced load issues the orders due by now.
    caf::reacts_to<pace_atom>,
    /// To itself: places again the orders (by index) the writer refused or
    /// did not answer.
    caf::reacts_to<place_atom, std::vector<std::int64_t>>,
    /// To itself: (append, aggregate ids, order ids, trace ids, event ids,
    /// step) appends again the follow-ups of a step the writer refused.
    caf::reacts_to<append_atom, std::vector<std::string>,
                   std::vector<std::int64_t>, std::vector<std::string>,
                   std::vector<std::string>, int>>;

/// The coordinator: spawns and supervises the writer, load generator,
/// relays and consumers, and reports the run. Its children's downs and
/// exits come as system messages (monitor and link), not through here.
using coordinator_handle = caf::typed_actor<
    /// (run) -> the report JSON, once the run has ended and every child is
    /// down: a bounded run ends by itself, any run on shutdown.
    caf::replies_to<run_atom>::with<std::string>,
    /// Stop gracefully (SIGINT, SIGTERM): a bounded run stopped before it
    /// ended by itself reports what it left undone.
    caf::reacts_to<shutdown_atom>,
    /// From the load generator: every order and follow-up is committed.
    caf::reacts_to<done_atom>,
    /// From a relay: its first claim cycle has run; once all have, the
    /// load starts.
    caf::reacts_to<ready_atom>,
    /// To itself: start the load now, the relays ready or not.
    caf::reacts_to<start_atom>,
    /// To itself: the periodic check (the consumers' lock, the progress
    /// line, whether a bounded run drained or stalled).
    caf::reacts_to<check_atom>,
    /// To itself: read the final state again after an outage.
    caf::reacts_to<final_read_atom>,
    /// To itself: (respawn, slot position) retries a restart whose
    /// consumer recovery failed.
    caf::reacts_to<respawn_atom, std::size_t>>;

} // namespace outbox::actors
