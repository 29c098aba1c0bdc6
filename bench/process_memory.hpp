#pragma once

// The bench process's own peak resident memory, stage by stage, from
// /proc/self: what a process running that stage's actors needs (on
// PostgreSQL the relay stage runs its relays as processes of their own,
// which this does not count).

#include <sys/types.h>

#include <optional>

namespace outbox::bench {

/// Starts a new peak: the kernel's high-water mark of resident memory
/// (VmHWM) is set back to what is resident now (clear_refs 5). False when
/// the kernel does not allow it; the next peak then covers the run so far.
bool reset_peak_resident();

/// VmHWM in MiB: the most memory resident since the last reset (or since
/// the process started); nothing when /proc cannot say.
std::optional<double> peak_resident_mib();

/// What process `pid` has resident now (VmRSS), in MiB; nothing once it is
/// gone or when /proc cannot say.
std::optional<double> resident_mib(pid_t pid);

/// The most memory process `pid` has had resident (VmHWM), in MiB.
std::optional<double> peak_resident_mib(pid_t pid);

} // namespace outbox::bench
