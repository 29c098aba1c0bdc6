#pragma once

// The fence on consumers. One process at a time holds the consumers' lock
// (broker/consumer_lock.hpp); its pops and applies carry a fence that the
// Lua scripts check against the lock before they move or apply anything, so
// a process that lost the lock (paused past its ttl, cut off from Redis)
// cannot take entries or apply them behind the new holder's back.

#include <cstdint>
#include <string>

namespace outbox::broker {

/// What a fenced script call checks. No holder: no check (the lab, tests,
/// tools that consume on their own).
struct fence {
  /// The consumers' lock key (keys::consumer_lock()).
  std::string lock;
  /// Who this process is in the lock.
  std::string holder;
  /// The lock's ttl, for taking back a lock that expired while nobody else
  /// took it (nobody has recovered this process's entries then).
  std::int64_t ttl_ms = 0;

  bool active() const { return !holder.empty(); }
};

/// How a fenced script's refusal starts; throw_if_error turns it into
/// broker_error(fenced).
inline constexpr const char* fenced_error_prefix = "OUTBOX_FENCED";

/// Lua defining `fence_refusal(lock, holder, ttl_ms)`: nil when the call may
/// go on (no holder given, the lock is `holder`'s, or it had expired and is
/// `holder`'s again), else the error reply to return before any write.
const std::string& lua_fence_check();

} // namespace outbox::broker
