#pragma once

// Error replies that describe the Redis server, not the command: a replica
// after a failover (READONLY), a full Redis under noeviction (OOM), a
// Redis replaying its AOF (LOADING)... Waiting ends them; charging the rows
// of a batch an attempt for them would turn healthy rows FAILED.

#include <string_view>

namespace outbox::broker {

/// Why a Redis cannot serve a command for now, read from its error reply.
enum class server_state {
  /// The error is about the command or its keys (WRONGTYPE, a script error).
  none,
  /// LOADING: replaying its AOF or RDB after a restart.
  loading,
  /// BUSY: stuck in a long script.
  busy,
  /// MASTERDOWN: a replica that lost its master and serves no stale data.
  master_down,
  /// TRYAGAIN: a cluster slot being migrated.
  try_again,
  /// READONLY: a replica (the address points at one after a failover).
  read_only,
  /// OOM: used memory over maxmemory under the noeviction policy.
  out_of_memory,
  /// NOREPLICAS: fewer replicas than min-replicas-to-write.
  no_replicas,
  /// CLUSTERDOWN: the cluster cannot serve the slot.
  cluster_down,
  /// MISCONF: writes refused since the last RDB save failed.
  cannot_persist,
  /// UNBLOCKED: a blocked command (BLPOP) ended because the server stopped
  /// being a master (Sentinel demoted it).
  unblocked,
  /// No error reply: WAIT counted fewer replicas with a push than
  /// redis.min_replica_acks asks for (broker/publisher.hpp).
  replicas_behind,
};

/// The state an error reply's text names by its error code (its first
/// word); none for any other error.
server_state server_state_of(std::string_view error);

/// For people: "is read-only (a replica)", "is out of memory (...)", ...
const char* describe(server_state state);

} // namespace outbox::broker
