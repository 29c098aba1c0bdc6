#pragma once

// Whether the process behind a relay's lease still runs: a relay's name
// (worker_name(), with the "<host>-<pid>.<start>" prefix `outbox run` gives its
// workers) says where it ran, so `outbox status` can tell the operator
// that leases wait for a process that is gone.

#include <string>

namespace outbox::actors {

/// "gone" when `owner` is a relay of a process on this host that no longer
/// runs; "" when it cannot tell (another host, a name in another form, or
/// the process runs).
std::string relay_process_state(const std::string& owner);

} // namespace outbox::actors
