#pragma once

// The coordinator's recoveries of processing lists (a dead consumer's,
// before its restart; every list, when it takes the consumers' lock). Each
// list goes back under the fence of the acquisition this process holds, so
// a process frozen midway and woken after another took the lock over is
// refused at its next list instead of moving the new holder's entries.
// Entries are counted list by list, and crash.recovery_pause_ms can freeze
// the coordinator between two lists.

#include "actors/coordinator_core.hpp"

#include <cstddef>
#include <exception>
#include <string>

namespace outbox::actors {

/// Puts every processing list back at the head of its queue. Throws
/// broker_error (fenced: the lock is no longer this acquisition's).
std::size_t recover_all_lists(coordinator_core& st);

/// Puts a dead consumer's lists back at the head of their queues. Throws
/// broker_error (fenced as above).
std::size_t recover_lists_of(coordinator_core& st, const std::string& consumer);

/// Whether `e` is the fence's refusal (broker_error fenced).
bool is_fenced(const std::exception& e);

} // namespace outbox::actors
