#pragma once

// The actors' interfaces, a caf::typed_actor each, with every message it
// handles and what it answers: the compiler checks each behavior, and each
// typed send, against them. The consumer's, the writer's and the relay's
// so far; the coordinator's joins them here when it becomes typed. Their
// decisions live in plain classes (consumer_core, writer_core,
// relay_core); the actors only translate messages and timers.

#include "actors/messages.hpp"

#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

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

} // namespace outbox::actors
