#pragma once

// The service manager's side channel (sd_notify(3)): READY=1 once a role
// has started, WATCHDOG=1 while its supervision loop turns, STOPPING=1 on a
// graceful stop. Spoken directly on $NOTIFY_SOCKET, one datagram a message,
// as systemd documents it; outside systemd (no NOTIFY_SOCKET) every call
// does nothing.

#include <chrono>
#include <optional>
#include <string>

namespace outbox::cli {

/// Sends `state` ("READY=1\nSTATUS=...") to $NOTIFY_SOCKET. Returns false
/// when there is no socket to tell or the datagram was not taken; a
/// service manager that cannot be told is no reason to stop.
bool notify_service_manager(const std::string& state);

/// How often systemd expects WATCHDOG=1 (WatchdogSec=, passed in
/// $WATCHDOG_USEC for this pid): nothing when no watchdog watches us.
std::optional<std::chrono::milliseconds> watchdog_interval();

} // namespace outbox::cli
