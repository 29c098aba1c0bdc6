#pragma once

#include "broker/connection.hpp"
#include "broker/keys.hpp"
#include "storage/db_options.hpp"
#include "storage/lease_policy.hpp"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace outbox::config {

/// The pipeline's shape for `outbox run` (config section "run").
struct run_settings {
  int relays = 2;
  int consumers = 1;
  /// Orders the load generator places (0: none, e.g. a relay-only process).
  std::int64_t orders = 0;
  /// Share of orders that also get follow-up events (OrderPaid, OrderShipped).
  double followup_share = 0.5;
  /// Orders the load generator keeps in flight at once (each a chain of
  /// requests); bounds the writer's group size from the load side.
  int max_in_flight = 1024;
  /// Offered load in orders per second (0: as fast as the writer takes
  /// them). The benchmark's latency figure runs at a fixed rate.
  int orders_per_second = 0;
  /// Writer group commit: at most this many requests per transaction...
  int commit_batch = 512;
  /// ...gathered for at most this long; 0 (the default): natural batching,
  /// a group is what waits in the writer's mailbox when it gets to commit.
  int commit_delay_ms = 0;
  /// A relay with nothing to claim polls again after this (doubling while
  /// idle, up to idle_poll_max_ms); a commit nudge wakes it at once.
  int poll_interval_ms = 50;
  int idle_poll_max_ms = 1000;
  /// How long a consumer's blocking pop waits before checking for shutdown.
  int consumer_block_ms = 200;
  /// Restarts allowed per relay/consumer slot before the run gives up.
  int restart_budget = 100;
};

/// How the consumers apply entries (config section "consumer").
struct consumer_settings {
  /// "record" or "dead-letter": what becomes of an event type the consumer
  /// has no effect for (broker/inbox_options.hpp).
  std::string unknown_types = "record";
  /// A Lua file of effects by event type (docs/events.md, "Effects in
  /// Redis"), builtin:orders for the built-in one (effects/orders.lua, the
  /// demo's reservation), "" for none.
  std::string effects_lua = "builtin:orders";
  /// The consumer's own database (docs/events.md, "Effects in your
  /// database"): a SQLite file or a PostgreSQL URI; "" for none. Needs
  /// effects_sql.
  std::string sink;
  /// A SQL file of effects by event type, run in `sink`; "" for none.
  std::string effects_sql;
};

/// Crash injection (config section "crash"): probability of an injected crash
/// at each point, per batch or entry, and a seed for reproducible runs.
struct crash_settings {
  std::uint64_t seed = 1;
  double relay_after_claim = 0;
  double relay_after_publish = 0;
  double relay_pause = 0;
  double consumer_after_pop = 0;
  double consumer_after_effect = 0;
  double consumer_after_sink_commit = 0;
  /// After each processing list a recovery puts back with more to do, the
  /// coordinator freezes this long (0: never); past the consumers' lock's
  /// ttl, the fence must refuse the lists left. A test hook: a window in
  /// which to SIGSTOP a process exactly mid-recovery.
  int recovery_pause_ms = 0;
};

/// What the long-running commands log and how (config section "log").
struct log_settings {
  /// trace, debug, info, warn, error or off; --log-level wins over it.
  std::string level = "warn";
  /// "text": lines for people; "json": one JSON object a line (ts, level,
  /// logger, msg) for log shippers.
  std::string format = "text";
  /// When stderr is not a terminal, `outbox run` and the roles draw no
  /// progress line: they log its figures at info this often instead.
  int summary_interval_ms = 60'000;
};

/// How often the coordinator renews the consumers' lock (its check
/// interval). lease.ttl_ms is also the lock's ttl, so validation requires
/// room for several renewals.
inline constexpr int consumer_lock_renewal_ms = 100;

/// Everything configurable, with defaults. config/outbox.json documents the
/// same keys; docs/configuration.md explains each.
struct settings {
  storage::db_options db;
  broker::connection_options redis;
  /// A file holding the Redis password (redis.password_file), read when the
  /// settings are resolved (cli/redis_credentials.hpp) into redis.password.
  std::string redis_password_file;
  /// A master under Sentinel (redis.sentinels as HOST[:PORT], each 26379
  /// when left out, and redis.master_name), and who we are to the sentinels
  /// (redis.sentinel_username, redis.sentinel_password or the file
  /// redis.sentinel_password_file): resolved with the rest of the address
  /// (cli/redis_credentials.hpp) into redis.sentinel. A redis-sentinel://
  /// address in --redis or $OUTBOX_REDIS replaces the first two.
  std::vector<std::string> redis_sentinels;
  std::string redis_master_name;
  std::string redis_sentinel_username;
  std::string redis_sentinel_password;
  std::string redis_sentinel_password_file;
  /// Start even when Redis may evict keys (a maxmemory-policy other than
  /// noeviction), which drops queued events or dedup records once Redis is
  /// full. Off: `outbox run` and `outbox lab` refuse such a Redis
  /// (redis.allow_evicting, --allow-evicting-redis).
  bool allow_evicting_redis = false;
  /// Four partitions by default so up to four consumers work in parallel
  /// while each aggregate stays on one list (one consumer): order holds.
  broker::keys broker = [] {
    broker::keys k;
    k.partitions = 4;
    return k;
  }();
  /// Put before every one of the pipeline's key names (broker.key_prefix),
  /// so the pipeline never shares a key with `outbox lab`, which keeps the
  /// seed's plain names (`outbox.events`, `processed`). "" gives the plain
  /// names: the pipeline's keys before this setting existed.
  std::string key_prefix = "pipeline:";
  /// Set once apply_key_prefix has put key_prefix into `broker`'s names.
  bool key_prefix_applied = false;
  storage::lease_policy lease;
  run_settings run;
  consumer_settings consumer;
  crash_settings crash;
  log_settings log;
  /// Where `outbox run` and the roles serve /metrics, /healthz and
  /// /readyz (metrics.listen, HOST:PORT); "" serves nothing. The flags
  /// --metrics-listen and --metrics-port win over it.
  std::string metrics_listen;
};

/// A configuration problem: `key` is the dotted path ("lease.ttl_ms"), or the
/// file name for problems with the file itself.
class config_error : public std::runtime_error {
public:
  config_error(std::string key, const std::string& reason)
      : std::runtime_error(key + ": " + reason), key_(std::move(key)) {}

  const std::string& key() const noexcept { return key_; }

private:
  std::string key_;
};

/// Reads a JSON config file over the defaults. Unknown keys, wrong types and
/// out-of-range values throw config_error naming the key. Does not validate
/// cross-key rules (call validate after applying flags).
settings load_file(const std::string& path, settings base = {});

/// Applies a JSON object of the same shape (used for the file and tests).
settings apply_json(const std::string& json_text, const std::string& origin,
                    settings base = {});

/// Checks ranges and rules between keys (ttl longer than the poll interval,
/// probabilities in [0,1], ...). Throws config_error naming the key.
void validate(const settings& s);

/// The default config file path, relative to the working directory.
inline constexpr const char* default_config_path = "config/outbox.json";

/// Puts key_prefix before every name in `broker` (once; a second call does
/// nothing). The commands call it after validation: from then on `broker`
/// holds the names the pipeline uses in Redis.
void apply_key_prefix(settings& s);

/// The names the pipeline used before broker.key_prefix existed: `broker`'s
/// names without the prefix.
broker::keys unprefixed_keys(const settings& s);

/// The key of the keyspace owner stamp (broker/keyspace_owner.hpp):
/// "<key_prefix>outbox.owner".
std::string owner_stamp_key(const settings& s);

/// The settings as JSON (for `outbox config --show` and the run report).
std::string to_json(const settings& s);

} // namespace outbox::config
