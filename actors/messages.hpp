#pragma once

// Every message the actors exchange: one type-ID block, one comment each.
// Kept free of caf/all.hpp so that including it stays cheap. The types they
// carry are plain (receipts.hpp): here they get their inspect() and IDs.

#include "actors/receipts.hpp"

#include <caf/actor.hpp>
#include <caf/error.hpp>
#include <caf/meta/type_name.hpp>
#include <caf/type_id.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace outbox::actors {

/// True when `error` is `code` of this category.
bool has_code(const caf::error& error, ec code);

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, order_receipt& x) {
  return f(caf::meta::type_name("order_receipt"), x.order_id, x.event_id,
           x.aggregate_id, x.replayed, x.trace_id);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, event_receipt& x) {
  return f(caf::meta::type_name("event_receipt"), x.event_id, x.aggregate_id,
           x.seq, x.replayed);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, order_ticket& x) {
  return f(caf::meta::type_name("order_ticket"), x.request_id, x.sku, x.qty,
           x.retry_of_unknown);
}

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, event_ticket& x) {
  return f(caf::meta::type_name("event_ticket"), x.aggregate_id, x.event_type,
           x.payload, x.event_id, x.retry_of_unknown, x.headers);
}

template <class Inspector, class Receipt>
typename Inspector::result_type inspect(Inspector& f,
                                        batch_outcome<Receipt>& x) {
  return f(caf::meta::type_name("batch_outcome"), x.receipt, x.error, x.detail);
}

} // namespace outbox::actors

CAF_ERROR_CODE_ENUM(outbox::actors::ec, "outbox")

CAF_BEGIN_TYPE_ID_BLOCK(outbox, caf::first_custom_type_id)

CAF_ADD_TYPE_ID(outbox, (outbox::actors::order_receipt))
CAF_ADD_TYPE_ID(outbox, (outbox::actors::event_receipt))
CAF_ADD_TYPE_ID(outbox, (std::vector<outbox::actors::order_ticket>))
CAF_ADD_TYPE_ID(outbox, (std::vector<outbox::actors::event_ticket>))
CAF_ADD_TYPE_ID(outbox, (std::vector<outbox::actors::order_outcome>))
CAF_ADD_TYPE_ID(outbox, (std::vector<outbox::actors::event_outcome>))

/// writer: (place, request_id or "", sku, qty) -> order_receipt.
CAF_ADD_ATOM(outbox, outbox::actors, place_atom, "place")
/// writer: (append, aggregate_id, event_type, payload JSON) -> event_receipt.
CAF_ADD_ATOM(outbox, outbox::actors, append_atom, "append")
/// writer: (place_batch, std::vector<order_ticket>) ->
/// std::vector<order_outcome>, one per ticket, in order: many orders in one
/// message (a load generator, any client with many at once).
CAF_ADD_ATOM(outbox, outbox::actors, place_batch_atom, "placebatch")
/// writer: (append_batch, std::vector<event_ticket>) ->
/// std::vector<event_outcome>, one per ticket, in order.
CAF_ADD_ATOM(outbox, outbox::actors, append_batch_atom, "appendmany")
/// writer to itself: (commit, generation) commits the gathered group.
CAF_ADD_ATOM(outbox, outbox::actors, commit_atom, "commit")
/// writer to relays: new outbox rows were committed, claim now.
CAF_ADD_ATOM(outbox, outbox::actors, nudge_atom, "nudge")
/// coordinator to writer: (relays, std::vector<relay_actor>) the relays to
/// nudge.
CAF_ADD_ATOM(outbox, outbox::actors, relays_atom, "relays")
/// relay to itself: (claim, generation) run one claim-publish-ack cycle.
CAF_ADD_ATOM(outbox, outbox::actors, claim_atom, "claim")
/// relay to itself: a paused (zombie) relay wakes up and carries on.
CAF_ADD_ATOM(outbox, outbox::actors, resume_atom, "resume")
/// consumer to itself: pop and apply the next entries.
CAF_ADD_ATOM(outbox, outbox::actors, pop_atom, "pop")
/// coordinator to load generator: start placing orders. Coordinator to
/// itself: start the load now, the relays ready or not.
CAF_ADD_ATOM(outbox, outbox::actors, start_atom, "start")
/// relay to coordinator: its first claim cycle has run (connected, its
/// statements prepared): the run's load may start.
CAF_ADD_ATOM(outbox, outbox::actors, ready_atom, "ready")
/// load generator to coordinator: every order and follow-up is committed.
CAF_ADD_ATOM(outbox, outbox::actors, done_atom, "done")
/// coordinator to itself: check progress and whether the run is finished.
CAF_ADD_ATOM(outbox, outbox::actors, check_atom, "check")
/// to coordinator: stop gracefully (SIGINT/SIGTERM or end of a bounded run).
CAF_ADD_ATOM(outbox, outbox::actors, shutdown_atom, "shutdown")
/// coordinator to itself: (respawn, slot position) retries a restart whose
/// consumer recovery failed.
CAF_ADD_ATOM(outbox, outbox::actors, respawn_atom, "respawn")
/// coordinator to itself: read the final state again after an outage.
CAF_ADD_ATOM(outbox, outbox::actors, final_read_atom, "finalread")
/// to coordinator: (run) -> report JSON once the run has ended.
CAF_ADD_ATOM(outbox, outbox::actors, run_atom, "run")
/// load generator to itself: issue the orders a paced load is due.
CAF_ADD_ATOM(outbox, outbox::actors, pace_atom, "pace")

CAF_END_TYPE_ID_BLOCK(outbox)
