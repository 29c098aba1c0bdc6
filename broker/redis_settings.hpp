#pragma once

// What a Redis is set up to keep. The pipeline's guarantees end where Redis
// drops data: an evicting maxmemory-policy deletes queued events (loss) or
// dedup records (a second effect) once Redis is full, and a Redis without
// persistence loses both when it restarts. `outbox run` and `outbox lab`
// judge these at start (cli/redis_guard.hpp); `outbox status` shows them.

#include "broker/broker_fwd.hpp"

#include <optional>
#include <string>

namespace outbox::broker {

struct redis_settings {
  /// CONFIG GET values; nothing when CONFIG cannot be used (renamed or
  /// disabled with rename-command, or denied by an ACL): see config_error.
  std::optional<std::string> maxmemory_policy;
  std::optional<std::string> appendonly;
  std::optional<std::string> appendfsync;
  /// RDB snapshot points ("3600 1 300 100"); "" when snapshots are off.
  std::optional<std::string> save;
  /// Redis's answer to CONFIG GET when it refused it; "" when it answered.
  std::string config_error;
  /// The first element of ROLE: master, slave or sentinel; "" when ROLE
  /// was refused too.
  std::string role;
  /// A master's replicas connected now (ROLE's third element); nothing for
  /// another role or when ROLE was refused.
  std::optional<std::size_t> replicas;

  /// True when Redis may delete keys under memory pressure: any policy but
  /// noeviction. False when unknown (CONFIG unavailable).
  bool may_evict() const;
  /// True when neither AOF nor RDB snapshots are on: a restart loses every
  /// key. False when unknown.
  bool persists_nothing() const;
};

/// Reads the settings in one round trip. Error replies (CONFIG or ROLE
/// renamed, disabled or denied) leave their fields unknown; a connection
/// problem throws broker_error(unavailable).
redis_settings read_redis_settings(connection& conn);

} // namespace outbox::broker
