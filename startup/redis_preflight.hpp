#pragma once

// What `outbox run` and `outbox lab` check in their Redis before they start
// anything: settings under which Redis itself loses what the pipeline
// handed it, the commands its user may send, and (run) the partition count
// every process must share.

#include "broker/broker_fwd.hpp"
#include "broker/redis_settings.hpp"
#include "config/settings.hpp"
#include "startup/verdict.hpp"

namespace outbox::startup {

/// An evicting maxmemory-policy is refused (refused_failure) unless
/// `allow_evicting` (then a warning); settings that cannot be read, or no
/// persistence at all, are warnings, and so, for a process with relays
/// (`min_replica_acks` not negative), are replicas whose copy of a push is not
/// waited for. Every line names the setting, its value and the fix.
verdict judge_redis(const broker::redis_settings& seen, bool allow_evicting,
                    int min_replica_acks = 0);

/// Reads the settings and judges them for `s`'s process. Throws
/// broker_error when Redis cannot be reached.
verdict check_redis_settings(broker::connection& conn,
                             const config::settings& s);

/// Asks Redis, without running them, whether this user may send the
/// commands this run's relays and consumers will (broker/command_access.hpp);
/// when it refuses any (an ACL without a command or a key, a proxy or a
/// server without the command), the refusal (refused_usage) names them in
/// Redis's words: better said at the start than met as a stall later.
/// Throws broker_error when Redis cannot be reached.
verdict check_commands(broker::connection& conn, const config::settings& s);

/// Records broker.partitions in Redis if no process did, and compares it
/// with the recorded count; a mismatch is refused (refused_usage) naming
/// both, and what to do. A Redis that takes no write now (a replica, full)
/// is compared with what it has recorded, if anything, and the run goes on
/// with a warning. Throws broker_error.
verdict check_partitions(broker::connection& conn, const config::settings& s);

} // namespace outbox::startup
