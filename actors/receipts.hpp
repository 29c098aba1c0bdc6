#pragma once

// The writer's requests and answers, and the errors that cross actor
// boundaries, as plain types: what the cores and the actors share.
// messages.hpp makes them CAF messages; nothing here includes CAF.

#include <cstdint>
#include <string>
#include <vector>

namespace outbox::actors {

/// Errors that cross actor boundaries (CAF error category "outbox").
enum class ec : std::uint8_t {
  /// CAF reserves 0 for "no error".
  none = 0,
  /// The request_id belongs to an order with other parameters.
  idempotency_conflict,
  /// A request broke a rule of the data model (bad sku, qty, event).
  invalid_input,
  /// The database stayed locked past busy_timeout, or could not be
  /// reached: nothing was written.
  store_busy,
  /// Any other database failure.
  store_failure,
  /// Redis could not be reached or refused the command.
  broker_unavailable,
  /// Crash injection: the actor died on purpose at a crash point, without
  /// cleaning up, exactly as if its thread had been killed.
  injected_crash,
  /// A consumer was refused by the fence: another process holds the
  /// consumers' lock, so this one must stop consuming (not a crash).
  consumer_fenced,
  /// A relay or consumer could not set itself up (open its database
  /// connection or its Redis port); the context names it and says why.
  setup_failed,
  /// The group's COMMIT was sent and its answer lost, and the writer could
  /// not find out whether it committed (storage::store_errc::
  /// outcome_unknown): send the same tickets again (same request ids and
  /// event ids, marked retry_of_unknown), never new ones.
  store_outcome_unknown,
};

/// Short stable name ("idempotency_conflict", ...).
std::string to_string(ec code);

/// The writer's answer to place_atom.
struct order_receipt {
  std::int64_t order_id = 0;
  std::string event_id;
  std::string aggregate_id;
  /// The request_id was seen before with the same parameters.
  bool replayed = false;
  /// The trace id of its OrderPlaced (storage::placed_order::trace_id):
  /// its follow-ups join that trace. "" when not known (a replay).
  std::string trace_id = {};
};

/// The writer's answer to append_atom.
struct event_receipt {
  std::string event_id;
  std::string aggregate_id;
  std::int64_t seq = 0;
  /// The ticket's event_id was in the outbox already: nothing written.
  bool replayed = false;
};

/// One order of a batch (place_batch_atom): what place_atom carries.
struct order_ticket {
  /// Empty: no idempotency key.
  std::string request_id;
  std::string sku;
  std::int64_t qty = 0;
  /// This ticket's last attempt ended in store_outcome_unknown (or no
  /// answer): a replay now is its own earlier attempt, which committed.
  bool retry_of_unknown = false;
};

/// One follow-up of a batch (append_batch_atom): what append_atom carries.
struct event_ticket {
  std::string aggregate_id;
  std::string event_type;
  /// A JSON object.
  std::string payload;
  /// The event's id, kept by every retry so that an event whose first
  /// attempt did commit is not appended twice. Empty: the store makes one.
  std::string event_id = {};
  /// As order_ticket::retry_of_unknown.
  bool retry_of_unknown = false;
  /// The event's headers (storage::event_request::headers): "" for none.
  std::string headers = {};
};

/// The writer's answer for one ticket of a batch, in the ticket's place:
/// its receipt, or the error the single request would have got (`error`
/// not none, `detail` its context), which refuses this ticket alone.
template <class Receipt>
struct batch_outcome {
  Receipt receipt;
  ec error = ec::none;
  std::string detail;

  bool ok() const { return error == ec::none; }
};

using order_outcome = batch_outcome<order_receipt>;
using event_outcome = batch_outcome<event_receipt>;

} // namespace outbox::actors
