#pragma once

#include "actors/interfaces.hpp"
#include "metrics/run_metrics.hpp"
#include "storage/event_ids.hpp"
#include "storage/trace_context.hpp"

#include <caf/stateful_actor.hpp>

#include <chrono>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <unordered_set>

namespace outbox::actors {

struct load_setup {
  /// Orders to place.
  std::int64_t orders = 0;
  /// Share of orders that get follow-ups (OrderPaid, then OrderShipped).
  double followup_share = 0.5;
  /// Orders in flight at once (each a chain of requests to the writer).
  int max_in_flight = 1024;
  /// Offered load in orders per second; 0 issues as fast as orders finish.
  int orders_per_second = 0;
  /// Makes request ids unique to this run; a retried request reuses its id,
  /// so the writer's idempotency turns the retry into a replay.
  std::string run_id;
  std::uint64_t seed = 1;
  writer_actor writer;
  /// Receives done_atom once every order and follow-up is committed: the
  /// coordinator.
  load_listener_actor report_to;
  std::shared_ptr<metrics::run_metrics> metrics;
};

/// The load generator: drives the writer like a shop front would, with a
/// bounded number of orders in flight.
struct load_state {
  static inline const char* name = "load_generator";

  load_setup setup;
  std::mt19937_64 random;
  std::int64_t issued = 0;
  std::int64_t finished = 0;
  /// When a paced load started: orders due = rate * time since.
  std::chrono::steady_clock::time_point started;
  /// The follow-ups' event ids: made once per follow-up, sent again by
  /// every retry of it.
  storage::event_id_source event_ids;
  /// Spans of each order's trace for its follow-ups.
  storage::trace_source traces;
  /// Orders (by index) and follow-ups (by event id) whose last attempt
  /// had an unknown outcome: their next attempt says so to the writer.
  std::unordered_set<std::int64_t> unknown_orders;
  std::unordered_set<std::string> unknown_events;
};

using load_actor = load_generator_actor::stateful_base<load_state>;

/// Its messages: load_generator_actor (interfaces.hpp). Starts on
/// start_atom; sends (done_atom) to setup.report_to at the end.
load_generator_actor::behavior_type load_generator(load_actor* self,
                                                   load_setup setup);

} // namespace outbox::actors
