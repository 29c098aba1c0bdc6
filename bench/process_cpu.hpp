#pragma once

// CPU time of other processes on this machine, from /proc: the bench's
// relay processes and a local PostgreSQL server.

#include "storage/db_options.hpp"

#include <sys/types.h>

#include <optional>

namespace outbox::bench {

/// User + system CPU seconds of process `pid` so far (its own threads, not
/// its children); nothing when it is gone.
std::optional<double> process_cpu_seconds(pid_t pid);

/// The postmaster of the PostgreSQL server `db` names, when that server
/// runs on this machine (its backend is a local "postgres" process);
/// nothing otherwise.
std::optional<pid_t> local_postmaster(const storage::db_options& db);

/// CPU seconds of a PostgreSQL server so far: its postmaster, its live
/// processes (backends, writers, autovacuum) and those that ended (which
/// the postmaster reaped and the kernel added to its children's time).
double server_cpu_seconds(pid_t postmaster);

} // namespace outbox::bench
