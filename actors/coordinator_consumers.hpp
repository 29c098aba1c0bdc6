#pragma once

// The coordinator's side of the consumers' lock (broker/consumer_lock.hpp):
// this process's consumers run only while it holds the lock, each with the
// fence of the acquisition it was started under; they stop, without
// counting as crashes, when the lock goes elsewhere or lapses.

#include "actors/coordinator.hpp"

#include <string>

namespace outbox::actors {

/// Starts this process's consumers once it holds the consumers' lock (or
/// uses none), after putting back what sits in processing lists. Throws
/// broker_error.
void start_consumers(coordinator_actor* self);

/// The lock is no longer this acquisition's: stops our consumers (no
/// restart) until the lock is acquired anew.
void lose_consumers(coordinator_actor* self, const std::string& why);

/// At every check: renews the lock, or acquires it anew and starts the
/// consumers, or stays standby. Never throws: trouble is logged and
/// retried at the next check.
void keep_consumers(coordinator_actor* self);

} // namespace outbox::actors
