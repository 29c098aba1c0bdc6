#pragma once

// A relay's decisions, free of CAF: one claim -> publish -> fenced ack
// cycle, the idle backoff, an injected crash or pause, riding out a Redis
// or database outage, and what it hands back when it stops. The relay
// actor (relay.cpp) turns each answer into a claim message to itself, a
// timer or its exit.

#include "actors/relay_context.hpp"
#include "actors/relay_next.hpp"

#include <optional>
#include <string>

namespace outbox::actors {

/// How a relay begins (relay_core::start).
struct relay_start {
  /// Its database and publisher are open: the first cycle may run.
  bool started = true;
  /// Why it could not start, when it could not.
  std::string why = {};
};

/// A relay: the leaseholder that moves outbox rows to the broker.
/// claim -> publish -> fenced ack, repeated at once while claims come back
/// full; otherwise it polls with a growing interval (the actor wakes it
/// early on a nudge). It never holds a transaction across the broker call.
class relay_core {
public:
  explicit relay_core(relay_setup setup);
  ~relay_core();

  /// Opens the database, its lease store and the publisher (said at error
  /// when it cannot).
  relay_start start();

  /// One cycle: settles what an outage left over, claims, publishes, acks.
  /// Database trouble becomes a backoff, said once per outage; Redis
  /// trouble hands the batch back and backs off.
  relay_next cycle();

  /// Publishes the batch held across an injected pause, as a zombie would:
  /// without lease checks, the fence decides. Nothing when none is held.
  std::optional<relay_next> resume();

  /// A graceful stop: hands back what a pause still holds, so another
  /// relay takes it at once instead of after the ttl, and settles what an
  /// outage left unsettled. Failures are said, not thrown: the leases run
  /// out then.
  void shutdown();

  /// A batch is held across an injected pause: until resume(), no cycle.
  bool paused() const { return relay_.paused.has_value(); }

  const std::string& name() const { return relay_.setup.name; }

private:
  relay_next run_cycle();
  void count_claim(const storage::claim& c);
  relay_next pause(storage::claim claimed);

  relay_context relay_;
};

} // namespace outbox::actors
