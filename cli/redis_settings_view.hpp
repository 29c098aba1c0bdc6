#pragma once

// `outbox status`'s view of how its Redis is set up: the settings that
// decide whether Redis keeps what the pipeline hands it, and the partition
// count the processes recorded.

#include "broker/broker_fwd.hpp"
#include "broker/keys.hpp"
#include "broker/redis_settings.hpp"
#include "broker/sentinel_master.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace outbox::cli {

struct redis_setup {
  /// Who this command is to which Redis: "HOST:PORT", the ACL user
  /// ("default" without one) and the logical database. Never the password.
  std::string address;
  /// Under Sentinel: the master's name and the sentinels asked, in the
  /// order the next ask goes (the one that answered first); else nothing.
  /// `address` is then where they named the master.
  std::optional<broker::sentinel_set> sentinel;
  /// Under Sentinel: since when the master is one, as a sentinel saw it,
  /// and `now_ms`, when that was asked; nothing when no sentinel
  /// described it (`master_error` says why).
  std::optional<broker::sentinel_master> master;
  std::int64_t now_ms = 0;
  std::string master_error;
  std::string user = "default";
  int db = 0;
  broker::redis_settings settings;
  /// What this config says, and what the first relay or consumer process
  /// recorded (nothing: none yet).
  std::size_t configured_partitions = 1;
  std::optional<std::size_t> recorded_partitions;
  std::string partitions_key;
  /// Why the record could not be read (a value that is not a count); "".
  std::string partitions_error;
};

/// Reads both. Throws broker_error when Redis cannot be reached.
redis_setup read_redis_setup(broker::connection& conn,
                             const broker::keys& names);

/// {"connection": {...}, "settings": {...}, "partitions": {...}} for
/// `status --json`; a value CONFIG could not read is null.
nlohmann::json redis_setup_json(const redis_setup& setup);

/// The REDIS SETTING table.
std::string redis_setup_text(const redis_setup& setup);

} // namespace outbox::cli
