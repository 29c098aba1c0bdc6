#pragma once

// One reading of both stores for `outbox status`: what each frame of
// --watch and each --check shows, taken once and rendered as tables or as
// JSON.

#include "broker/broker_stats.hpp"
#include "broker/command_access.hpp"
#include "broker/consumer_processes.hpp"
#include "broker/keys.hpp"
#include "broker/relay_processes.hpp"
#include "cli/redis_settings_view.hpp"
#include "storage/outbox_views.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace outbox::cli {

struct status_snapshot {
  /// When it was taken (wall clock, ms since the epoch).
  storage::millis now = 0;
  storage::outbox_stats outbox;
  /// Nothing when Redis could not be read; redis_error says why.
  std::optional<broker::broker_stats> redis;
  std::optional<redis_setup> setup;
  std::vector<broker::consumer_process> consumers;
  /// Every relay process's heartbeat: running, stopped or silent.
  std::vector<broker::relay_process> relays;
  /// How long the oldest queued entry has waited (broker/oldest_waiting);
  /// nothing when the queues are empty.
  std::optional<storage::millis> oldest_waiting;
  /// The pipeline's commands Redis refuses this user (its ACL, a proxy):
  /// status asks with its own connection, so with the run's credentials
  /// it sees what the run meets (broker/command_access.hpp).
  std::vector<broker::refused_command> refused;
  std::string redis_error;
};

/// How long ago `leases`' newest claim was made, read from the claim time
/// the database stored (never from lease.ttl_ms, which may have changed
/// since); nothing for leases taken by a binary that did not store it.
inline std::optional<storage::millis>
last_claim_age(const storage::owner_leases& leases, storage::millis now) {
  if (!leases.last_claim)
    return std::nullopt;
  return now - *leases.last_claim;
}

/// What `status --check` compares with.
struct health_limits {
  /// Rows PENDING or SENDING for longer than this make the pipeline
  /// unhealthy (--max-unpublished-age).
  storage::millis max_unpublished_age = 0;
  /// Rows PENDING or SENDING while no running relay was seen for longer
  /// than this (--max-relay-silence).
  storage::millis max_relay_silence = 0;
  /// Entries waiting longer than this while no consuming process is alive
  /// (--max-consumer-silence).
  storage::millis max_consumer_silence = 0;
};

/// The verdict of `status --check`, with what it compared with.
struct health {
  health_limits limits;
  /// One sentence per problem; none when healthy.
  std::vector<std::string> problems;

  bool ok() const { return problems.empty(); }
};

/// The verdict on `snapshot`: FAILED rows, an unpublished row older than
/// max_unpublished_age, unpublished rows and no relay seen running within
/// max_relay_silence (its heartbeat or a lease it claimed), entries waiting
/// longer than max_consumer_silence and no consuming process, a consuming
/// process whose heartbeat is stale, a consumers' lock without expiry,
/// Redis unreadable or refusing the pipeline's commands, dead-lettered
/// entries waiting.
health judge(const status_snapshot& snapshot, const health_limits& limits);

/// The tables, one string (written at once: --watch redraws without a
/// half-drawn screen).
std::string status_text(const status_snapshot& snapshot,
                        const broker::keys& names,
                        const std::optional<health>& verdict);

/// One JSON object, with "ts" (ISO 8601, UTC) and "ts_ms".
nlohmann::json status_json(const status_snapshot& snapshot,
                           const std::optional<health>& verdict);

/// An age the way an operator reads it, rounded down: 350ms, 2.3s, 4m12s,
/// 3h05m, 2d04h.
std::string rounded_duration(storage::millis ms);

} // namespace outbox::cli
