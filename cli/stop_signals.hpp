#pragma once

#include <signal.h>
#include <time.h>

#include <string>

namespace outbox::cli {

/// SIGINT and SIGTERM: the signals that stop a long-running command
/// (`run`, `status --watch`). The caller blocks them and takes them with
/// wait_for_signal, so a stop is never a kill in the middle of a write.
sigset_t stop_signals();

/// Waits up to `timeout` for one of `signals` (blocked by the caller).
/// Returns the signal that arrived, 0 when the time ran out. An
/// interrupted wait (EINTR) waits again; any other failure throws
/// std::system_error: a wait that fails at once, in a loop, would spin and
/// never see the signals.
int wait_for_signal(const sigset_t& signals, const timespec& timeout);

/// "SIGINT", "SIGTERM"; "signal N" for another.
std::string signal_name(int signal);

} // namespace outbox::cli
