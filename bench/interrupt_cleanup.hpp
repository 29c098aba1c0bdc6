#pragma once

// What a bench leaves behind while it runs (a scratch database on the
// user's server, a folder holding a config file with secrets, keys in
// Redis, relay processes) must go also when the bench is told to stop
// (SIGINT, SIGTERM), which does not unwind the stages. Each owner
// registers how to undo itself; the command's signal thread runs them all
// before exiting, and an owner's destructor runs its own.

#include <functional>

namespace outbox::bench {

/// Registers `undo` under `owner`.
void register_cleanup(const void* owner, std::function<void()> undo);
/// Unregisters `owner`'s; waits while run_cleanups is running it.
void forget_cleanup(const void* owner);
/// Runs `owner`'s now if it is still registered, and unregisters it: what
/// a destructor calls, so its undo never runs twice or at the same time as
/// the signal thread's.
void run_cleanup(const void* owner);
/// Runs every registered cleanup once, the last registered first (relay
/// processes before the database they use), errors ignored: the process
/// is leaving. From any thread.
void run_cleanups();

} // namespace outbox::bench
