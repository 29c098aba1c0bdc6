#pragma once

// The fence on consumers. One process at a time holds the consumers' lock
// (broker/consumer_lock.hpp); its pops and applies carry a fence that the
// Lua scripts check against the lock before they move or apply anything, so
// a process that lost the lock (paused past its ttl, cut off from Redis)
// cannot take entries or apply them behind the new holder's back.

#include <string>

namespace outbox::broker {

/// What a fenced script call checks. No holder: no check (the lab, tests,
/// tools that consume on their own).
struct fence {
  /// The consumers' lock key (keys::consumer_lock()).
  std::string lock;
  /// The token of the acquisition the consumer was started under.
  std::string holder;

  bool active() const { return !holder.empty(); }
};

/// How a fenced script's refusal starts (broker/lua/fence_refusal.lua
/// writes it); throw_if_error turns it into broker_error(fenced).
inline constexpr const char* fenced_error_prefix = "OUTBOX_FENCED";

} // namespace outbox::broker
