#pragma once

// The names host_network gives what it makes carry the pid of the process
// that made them, so that leftovers of a crashed run are told apart from
// another live run's.

#include <string>

namespace outbox::test {

/// A number unique in this process, for the next name.
int next_network_serial();

/// An interface name, "obx<pid><kind><serial>": 15 characters at most
/// (IFNAMSIZ) for any pid and up to 9999 serials.
std::string network_link_name(char kind, int serial);

/// A namespace name, "obx-<pid>-<serial>".
std::string network_namespace_name(int serial);

/// Removes the namespaces and root-namespace links named as above whose
/// pid is not a live process (a run that crashed before its destructors
/// ran). A pid in use again, by whatever, keeps its names.
void remove_dead_runs_leftovers();

} // namespace outbox::test
