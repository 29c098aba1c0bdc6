#pragma once

// What a relay does after a cycle, a resume or its start (relay_next), and
// the two answers its steps share: back off while idle, die at a crash
// point. The relay actor (relay.cpp) turns the answer into a claim message
// to itself, a timer or its exit.

#include "actors/receipts.hpp"
#include "actors/relay_context.hpp"

namespace outbox::actors {

/// What a relay does next.
struct relay_next {
  enum class what {
    /// Claim again at once: the last claim came back full, or found more
    /// candidates than it took, or the batch was dropped. (An empty claim
    /// whose walk stopped at its bound waits the poll interval instead.)
    claim_now,
    /// Claim again after `delay_ms`: the poll interval, or the idle backoff.
    claim_later,
    /// Frozen by an injected pause: resume after `delay_ms`; until then
    /// claims and nudges are not acted on.
    pause,
    /// It ends with `reason` (injected_crash, setup_failed).
    stop,
  };
  what next = what::claim_now;
  /// Milliseconds: a pause lasts one and a half lease ttls, which may
  /// be days.
  storage::millis delay_ms = 0;
  ec reason = ec::none;

  static relay_next claim_now() { return {}; }
  static relay_next claim_after(storage::millis delay_ms) {
    return {what::claim_later, delay_ms};
  }
};

/// Nothing to do: poll again later, the interval doubling from
/// poll_interval_ms up to idle_poll_max_ms while idle.
relay_next idle_backoff(relay_context& relay);

/// An injected crash at `point`: counted and said; the relay dies at once,
/// leaving every lease behind.
relay_next relay_crash(relay_context& relay, const char* point);

} // namespace outbox::actors
