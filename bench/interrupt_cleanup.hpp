#pragma once

// What a bench leaves behind while it runs (a scratch database on the
// user's server, a folder holding a config file with secrets, keys in
// Redis) must go also when the bench is told to stop (SIGINT, SIGTERM),
// which does not unwind the stages. The workspace registers how to undo
// itself; the command's signal thread runs it before exiting.

#include <functional>

namespace outbox::bench {

/// Registers `undo` under `owner` until forget_cleanup(owner).
void register_cleanup(const void* owner, std::function<void()> undo);
/// Unregisters; waits while run_cleanups is running it.
void forget_cleanup(const void* owner);
/// Runs every registered cleanup once (errors ignored: the process is
/// leaving), from any thread.
void run_cleanups();

} // namespace outbox::bench
