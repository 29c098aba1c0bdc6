#include "config/settings.hpp"

#include "broker/redact.hpp"
#include "config/fields.hpp"

#include <string>
#include <utility>
#include <vector>

namespace outbox::config {
namespace {

std::string number(std::int64_t value) {
  return std::to_string(value);
}

/// `key` broke its rule against another setting: "<rule> (<bound>), got
/// <value>", then why the rule matters when that is not plain.
config_error against(const char* key, const std::string& rule,
                     std::int64_t bound, std::int64_t value,
                     const char* why = nullptr) {
  auto reason = rule + " (" + number(bound) + "), got " + number(value);
  if (why != nullptr)
    reason += std::string{": "} + why;
  return config_error(key, reason);
}

/// lease.ttl_ms is also the ttl of the consumers' lock (lock_ttl()), which the
/// coordinator renews at every check (consumer_lock_renewal_ms). A check
/// first reads both stores for its progress probe: the database read can
/// wait out db.busy_timeout_ms and the Redis read redis.io_timeout_ms
/// before the next renewal goes out. A ttl shorter than that lets the lock
/// lapse under a slow store and the consumers stop (a 100 ms ttl lapsed
/// 107 ms into a run); three renewals is the least that survives one late
/// one.
void check_lock_ttl(const settings& s) {
  constexpr std::int64_t renewals = 3;
  if (s.lease.lock_ttl() < renewals * consumer_lock_renewal_ms)
    throw config_error("lease.ttl_ms",
                       "must be at least " +
                           number(renewals * consumer_lock_renewal_ms) +
                           " (three renewals of the consumers' lock, every " +
                           number(consumer_lock_renewal_ms) + " ms), got " +
                           number(s.lease.ttl));
  auto stores =
      static_cast<std::int64_t>(s.db.busy_timeout_ms) + s.redis.io_timeout_ms;
  if (s.lease.lock_ttl() <= stores)
    throw config_error(
        "lease.ttl_ms",
        "must be greater than db.busy_timeout_ms (" +
            number(s.db.busy_timeout_ms) + ") + redis.io_timeout_ms (" +
            number(s.redis.io_timeout_ms) + ") = " + number(stores) + ", got " +
            number(s.lease.ttl) +
            ": the consumers' lock would lapse while a check waits for a "
            "slow store; raise the ttl or lower the timeouts");
}

/// Rules between keys. Each names the key a user would most likely change.
void check_relations(const settings& s) {
  // A relay waiting for its push's replicas holds its rows' lease, and
  // renews it only once a third of it is left: past it, another relay
  // takes the rows over (charging them an attempt) and pushes them again.
  if (s.redis.min_replica_acks > 0 &&
      s.redis.replica_ack_timeout_ms > s.lease.longest_replica_wait())
    throw config_error("redis.replica_ack_timeout_ms",
                       "must be below a third of lease.ttl_ms (" +
                           number(s.lease.ttl) +
                           ") with redis.min_replica_acks, got " +
                           number(s.redis.replica_ack_timeout_ms) +
                           ": a relay would wait for replicas past its "
                           "rows' lease");
  // Only a host: a URI or user information ("u:pw@host") would go to the
  // resolver, password included. Credentials have keys of their own, and
  // --redis takes the URI form.
  if (!broker::valid_host(s.redis.where.host))
    throw config_error("redis.host",
                       "must be a host name or an IP address (letters, "
                       "digits, . - _ : %; the user and password go in "
                       "redis.username and redis.password_file), got \"" +
                           broker::redact_secrets(s.redis.where.host) + "\"");
  // AUTH takes the user as one argument; a space or a control character
  // is a paste gone wrong, not a user Redis could have (ACL SETUSER).
  for (unsigned char c : s.redis.username)
    if (c <= ' ' || c == 0x7f)
      throw config_error("redis.username",
                         "must not hold spaces or control characters");

  // A relay holding leases renews them from its loop, which wakes at least
  // every poll_interval_ms; a lease shorter than that expires before its
  // holder can renew it, and every batch would be taken over. The idle
  // backoff (idle_poll_max_ms) does not matter here: a relay only backs off
  // when its claim was empty, i.e. when it holds no lease to renew. It only
  // delays the takeover of someone else's expired lease.
  if (s.lease.ttl <= s.run.poll_interval_ms)
    throw against("lease.ttl_ms", "must be greater than run.poll_interval_ms",
                  s.run.poll_interval_ms, s.lease.ttl,
                  "a relay renews its leases once per poll");

  check_lock_ttl(s);

  if (s.lease.backoff_base > s.lease.backoff_max)
    throw against("lease.backoff_base_ms",
                  "must not exceed lease.backoff_max_ms", s.lease.backoff_max,
                  s.lease.backoff_base);

  // The idle poll doubles from poll_interval_ms up to this cap.
  if (s.run.idle_poll_max_ms < s.run.poll_interval_ms)
    throw against("run.idle_poll_max_ms",
                  "must be at least run.poll_interval_ms",
                  s.run.poll_interval_ms, s.run.idle_poll_max_ms);

  // A read timeout shorter than a blocking pop kills the connection while
  // the pop is still legitimately waiting (hiredis drops the context).
  if (s.redis.io_timeout_ms <= s.run.consumer_block_ms)
    throw against("redis.io_timeout_ms",
                  "must be greater than run.consumer_block_ms",
                  s.run.consumer_block_ms, s.redis.io_timeout_ms,
                  "a blocking pop would time the connection out");

  // A relay may publish an entry up to max_entry_bytes; a consumer
  // dead-letters, truncated and beyond replay, any entry over
  // max_consume_bytes. Below the publishing limit it would lose events this
  // very configuration sends.
  if (s.broker.max_consume_bytes < s.broker.max_entry_bytes)
    throw against("broker.max_consume_bytes",
                  "must be at least broker.max_entry_bytes",
                  static_cast<std::int64_t>(s.broker.max_entry_bytes),
                  static_cast<std::int64_t>(s.broker.max_consume_bytes),
                  "a consumer would dead-letter, unreplayable, entries the "
                  "relays publish");

  // Two roles sharing one Redis key would mix types (list, hash) or data.
  const std::vector<std::pair<const char*, const std::string*>> names = {
      {"broker.queue", &s.broker.queue},
      {"broker.processed", &s.broker.processed},
      {"the reservation hash", &s.broker.reserved},
      {"broker.aggregate_seq", &s.broker.aggregate_seq},
      {"broker.counters", &s.broker.counters},
      {"broker.dead_letter", &s.broker.dead_letter},
  };
  for (std::size_t i = 0; i < names.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (*names[i].second == *names[j].second)
        throw config_error(names[i].first, std::string{"must differ from "} +
                                               names[j].first + " (both \"" +
                                               *names[i].second + "\")");
}

/// `outbox bench` works on "bench." + the pipeline's names: a pipeline
/// name that starts so could be a bench key, which the bench deletes.
void check_not_bench_keys(const settings& s) {
  const std::string bench = "bench.";
  auto name = [&](const std::string& key) {
    return s.key_prefix_applied ? key : s.key_prefix + key;
  };
  const auto& b = s.broker;
  for (const std::string* key :
       {&b.queue, &b.processed, &b.reserved, &b.aggregate_seq, &b.counters,
        &b.dead_letter, &b.processing_prefix})
    if (name(*key).compare(0, bench.size(), bench) == 0)
      throw config_error("broker.key_prefix",
                         "the pipeline's key names must not start with \"" +
                             bench + "\" (outbox bench's keys), got \"" +
                             name(*key) + "\"");
}

/// Effects may write any key under "<key_prefix>effects:": a pipeline
/// name there could be overwritten by one.
void check_not_effects_keys(const settings& s) {
  const std::string effects = "effects:";
  auto unprefixed = [&](const std::string& key) {
    return s.key_prefix_applied ? key.substr(s.key_prefix.size()) : key;
  };
  const auto& b = s.broker;
  const std::vector<std::pair<const char*, const std::string*>> names = {
      {"broker.queue", &b.queue},
      {"broker.processed", &b.processed},
      {"broker.aggregate_seq", &b.aggregate_seq},
      {"broker.counters", &b.counters},
      {"broker.dead_letter", &b.dead_letter},
      {"broker.processing_prefix", &b.processing_prefix}};
  for (const auto& [setting, key] : names)
    if (unprefixed(*key).compare(0, effects.size(), effects) == 0)
      throw config_error(setting, "must not start with \"" + effects +
                                      "\" (the effects' keys), got \"" +
                                      unprefixed(*key) + "\"");
}

/// A URI of a scheme outbox does not speak (`postgress://`, `mysql://`) is
/// no SQLite file name either: named, not opened as a file of that name.
void check_db_scheme(const settings& s) {
  const auto& path = s.db.path;
  auto colon = path.find("://");
  if (colon == std::string::npos || s.db.postgres())
    return;
  throw config_error("db.path",
                     "unknown scheme \"" + path.substr(0, colon) +
                         "://\": PostgreSQL is postgresql:// or postgres://, "
                         "and SQLite takes a file path (no scheme)");
}

} // namespace

void validate(const settings& s) {
  for (const auto& f : detail::fields())
    detail::check_field(f, s);
  check_db_scheme(s);
  check_relations(s);
  check_not_bench_keys(s);
  check_not_effects_keys(s);
}

} // namespace outbox::config
