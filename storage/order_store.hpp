#pragma once

#include "storage/types.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace outbox::storage {

/// Limits on order fields, enforced before any write (and by CHECKs).
inline constexpr std::size_t max_sku_length = 64;
inline constexpr std::int64_t max_qty = 1'000'000;
inline constexpr std::size_t max_request_id_length = 128;

/// One order as a client asks for it. request_id, when present, makes the
/// request idempotent: a retry with the same key never creates a second order.
struct order_request {
  std::optional<std::string> request_id;
  std::string sku;
  std::int64_t qty = 0;
  /// The OrderPlaced event's headers, a JSON object's text ("" for none);
  /// a traceparent is added unless there is one (storage/trace_context.hpp).
  /// Not part of the request's fingerprint: a retry is the same request
  /// whatever trace it travels in.
  std::string headers = {};
};

/// Returns a message naming the bad field, or nothing when the request is
/// valid. place_order throws store_error(invalid_input) with this message.
std::optional<std::string> validate(const order_request& request);

/// What happened to one order request.
struct placed_order {
  enum class outcome {
    /// A new order and its OrderPlaced outbox row were committed.
    placed,
    /// The request_id was seen before with the same parameters: these are the
    /// original order and event, nothing new was written.
    replayed,
    /// The request_id was seen before with other parameters: rejected,
    /// nothing written; order_id/event_id name the original order.
    conflict,
  };
  outcome result = outcome::placed;
  std::int64_t order_id = 0;
  std::string event_id;
  std::string aggregate_id;
  /// For placed: the trace id of the OrderPlaced's traceparent (the one
  /// given or the one added), so that the order's next events can join
  /// its trace. "" otherwise.
  std::string trace_id = {};
};

/// One follow-up event for an existing aggregate (OrderPaid, OrderShipped...).
struct event_request {
  std::string aggregate_id;
  std::string event_type;
  /// A JSON object, stored verbatim.
  std::string payload;
  /// The event's id, chosen by the caller so that a retry after an unknown
  /// outcome is the same event: appending an id that exists writes nothing
  /// and returns that row (replayed). Empty: the store makes a new one.
  std::string event_id = {};
  /// A JSON object of string values ("" for none: text/event_headers.hpp),
  /// stored with the row and carried in its queue entry. A traceparent is
  /// added unless there is one.
  std::string headers = {};
};

/// An event committed to the outbox.
struct appended_event {
  std::string event_id;
  std::string aggregate_id;
  std::int64_t seq = 0;
  /// The request's event_id was there already: this is that row, and
  /// nothing was written.
  bool replayed = false;
};

/// Returns a message naming the bad field, or nothing when the event is
/// valid: a non-empty aggregate_id and event_type, a JSON object payload,
/// an event_id that is empty or a UUID's canonical text, headers as
/// text::headers_problem() wants them.
std::optional<std::string> validate(const event_request& request);

/// Throws store_error(invalid_input) naming the first invalid request of a
/// batch ("order request 2: qty must be ..."; a batch of one: the problem
/// alone). Every backend checks a batch this way before writing any of it.
void require_valid(const std::vector<order_request>& requests);
void require_valid(const std::vector<event_request>& requests);

/// What makes two requests with one request_id "the same request", as the
/// request key stores it.
std::string request_fingerprint(const order_request& request);

/// The aggregate id of an order: events of one order share it.
std::string order_aggregate_id(std::int64_t order_id);

/// Requests whose group's COMMIT answer was lost with the connection
/// (PostgreSQL), counted since the store was made: what the store found
/// out by looking them up afterwards. `lost` minus the other two is what
/// it reported as store_errc::outcome_unknown.
struct lost_commits {
  std::int64_t lost = 0;
  std::int64_t committed = 0;
  std::int64_t not_committed = 0;
};

/// Writes business facts together with their outbox rows. Each call is one
/// write transaction; the batch calls are the writer's group commit.
/// Throws store_error.
class order_store {
public:
  virtual ~order_store() = default;

  /// Places one order: request key, order row and outbox row in one
  /// transaction, or nothing. A batch of one unless a backend knows better.
  virtual placed_order place_order(const order_request& request, millis now) {
    return place_orders({request}, now).front();
  }

  /// Places several orders in one transaction. Results line up with the
  /// requests; a conflict is a result, not an error, and affects only its own
  /// request. Invalid requests throw before anything is written.
  virtual std::vector<placed_order>
  place_orders(const std::vector<order_request>& requests, millis now) = 0;

  /// Appends one event; seq is allocated per aggregate inside the
  /// transaction. A batch of one unless a backend knows better.
  virtual appended_event append_event(const event_request& request,
                                      millis now) {
    return append_events({request}, now).front();
  }

  /// Appends several events in one transaction, in the order given.
  virtual std::vector<appended_event>
  append_events(const std::vector<event_request>& requests, millis now) = 0;

  /// Called inside every write transaction just before COMMIT. Throwing from
  /// it rolls the whole transaction back: tests use it to prove atomicity.
  virtual void set_before_commit(std::function<void()> hook) = 0;

  /// See lost_commits. A backend that always knows its commits' outcome
  /// (SQLite: a local file) has none.
  virtual lost_commits lost_commit_outcomes() const { return {}; }
};

} // namespace outbox::storage
