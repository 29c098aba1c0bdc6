#pragma once

// W3C trace context for events the outbox's writers append: an event given
// no traceparent starts a trace of its own (a new trace id and span id),
// carried in its `traceparent` header from the outbox row to the queue
// entry and the log lines about it. A caller that traces already gives its
// own traceparent, which is kept: `outbox run`'s load generator gives an
// order's follow-ups spans of the order's trace (child_traceparent).

#include <random>
#include <string>

namespace outbox::storage {

/// Makes trace and span ids from one generator, seeded from
/// std::random_device. Not thread-safe: one per store.
class trace_source {
public:
  trace_source();

  /// A new traceparent "00-<trace id>-<span id>-01": a trace of its own,
  /// sampled (a tracer downstream records it).
  std::string new_traceparent();

  /// `headers` (a JSON object's text, "" for none; valid: the caller
  /// checked it) with a traceparent: as given when it has one, else with
  /// a new one added.
  std::string with_traceparent(const std::string& headers);

  /// A traceparent of another span of the trace `trace_id` (32 hex digits,
  /// as text::trace_id_of gives): an event that follows one already traced
  /// (an order's follow-ups), in its trace.
  std::string child_traceparent(const std::string& trace_id);

private:
  std::mt19937_64 rng_;
};

} // namespace outbox::storage
