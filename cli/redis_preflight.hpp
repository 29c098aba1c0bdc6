#pragma once

// What `outbox run` and `outbox lab` check in their Redis before they start
// anything: settings under which Redis itself loses what the pipeline
// handed it, and (run) the partition count every process must share.

#include "broker/broker_fwd.hpp"
#include "broker/redis_settings.hpp"
#include "config/settings.hpp"

#include <optional>
#include <string>
#include <vector>

namespace outbox::cli {

/// What a command makes of its Redis's settings.
struct redis_verdict {
  /// Why it must not start (exit 1); empty when it may.
  std::string refusal;
  /// Lines for stderr, each printed once.
  std::vector<std::string> warnings;
};

/// An evicting maxmemory-policy is refused unless `allow_evicting` (then a
/// warning); settings that cannot be read, or no persistence at all, are
/// warnings, and so, for a process with relays (`min_replica_acks` not
/// negative), are replicas whose copy of a push is not waited for. Every
/// line names the setting, its value and the fix.
redis_verdict judge_redis(const broker::redis_settings& seen,
                          bool allow_evicting, int min_replica_acks = 0);

/// Reads the settings, prints the warnings on stderr after `command` ("outbox
/// run"), and returns the exit code when the command must stop (the refusal
/// printed too). Throws broker_error when Redis cannot be reached.
std::optional<int> check_redis_settings(broker::connection& conn,
                                        const config::settings& s,
                                        const std::string& command);

/// Asks Redis, without running them, whether this user may send the
/// commands this run's relays and consumers will (broker/command_access.hpp);
/// when it refuses any (an ACL without a command or a key, a proxy or a
/// server without the command), names them in Redis's words and returns
/// exit 2: better said at the start than met as a stall later. Throws
/// broker_error when Redis cannot be reached.
std::optional<int> check_commands(broker::connection& conn,
                                  const config::settings& s,
                                  const std::string& command);

/// Records broker.partitions in Redis if no process did, and compares it
/// with the recorded count; on a mismatch prints both, and what to do, and
/// returns exit 2. A Redis that takes no write now (a replica, full) is
/// compared with what it has recorded, if anything, and the run goes on.
/// Throws broker_error.
std::optional<int> check_partitions(broker::connection& conn,
                                    const config::settings& s,
                                    const std::string& command);

} // namespace outbox::cli
