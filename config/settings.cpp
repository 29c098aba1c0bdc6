#include "config/settings.hpp"

#include "broker/redact.hpp"
#include "config/fields.hpp"
#include "text/json_text.hpp"

#include <nlohmann/json.hpp>

#include <iomanip>
#include <sstream>
#include <type_traits>
#include <utility>

namespace outbox::config {
namespace detail {
namespace {

/// The member reached from `obj` by a chain of member pointers:
/// member<&settings::redis, &connection_options::where, &endpoint::port>(s).
template <auto First, auto... Rest, class T>
auto& member(T& obj) {
  if constexpr (sizeof...(Rest) == 0)
    return obj.*First;
  else
    return member<Rest...>(obj.*First);
}

template <auto... Path>
field integer(const char* section, const char* key, std::int64_t min,
              std::int64_t max) {
  field f{section, key, kind::integer, min, max};
  f.get_integer = [](const settings& s) -> std::int64_t {
    return static_cast<std::int64_t>(member<Path...>(s));
  };
  f.set_integer = [](settings& s, std::int64_t value) {
    auto& target = member<Path...>(s);
    target = static_cast<std::decay_t<decltype(target)>>(value);
  };
  return f;
}

template <auto... Path>
field probability(const char* section, const char* key) {
  field f{section, key, kind::number, 0, 1};
  f.get_number = [](const settings& s) -> double { return member<Path...>(s); };
  f.set_number = [](settings& s, double value) { member<Path...>(s) = value; };
  return f;
}

template <auto... Path>
field text(const char* section, const char* key,
           std::vector<std::string> choices = {}) {
  field f{section, key, kind::string, 0, 0, std::move(choices)};
  f.get_string = [](const settings& s) -> const std::string& {
    return member<Path...>(s);
  };
  f.set_string = [](settings& s, std::string value) {
    member<Path...>(s) = std::move(value);
  };
  return f;
}

/// A text key that may be left empty: "" means not given.
field optional(field f) {
  f.may_be_empty = true;
  return f;
}

/// A text key that is a secret as a whole: to_json shows "***".
field secret(field f) {
  f.secret = true;
  f.may_be_empty = true;
  return f;
}

/// Marks a key whose text may carry credentials (to_json masks them).
field secret_bearing(field f) {
  f.may_hold_secrets = true;
  return f;
}

template <auto... Path>
field text_list(const char* section, const char* key) {
  field f{section, key, kind::text_list};
  f.get_list = [](const settings& s) -> const std::vector<std::string>& {
    return member<Path...>(s);
  };
  f.set_list = [](settings& s, std::vector<std::string> value) {
    member<Path...>(s) = std::move(value);
  };
  return f;
}

template <auto... Path>
field flag(const char* section, const char* key) {
  field f{section, key, kind::boolean};
  f.get_boolean = [](const settings& s) -> bool { return member<Path...>(s); };
  f.set_boolean = [](settings& s, bool value) { member<Path...>(s) = value; };
  return f;
}

using S = settings;
using storage::db_options;
using storage::lease_policy;
using conn = broker::connection_options;
using broker::endpoint;
using broker::keys;
constexpr auto dur = max_duration_ms;

std::vector<field> make_fields() {
  return {
      text<&S::db, &db_options::path>("db", "path"),
      integer<&S::db, &db_options::busy_timeout_ms>("db", "busy_timeout_ms", 0,
                                                    dur),
      text<&S::db, &db_options::synchronous>("db", "synchronous",
                                             {"FULL", "NORMAL", "OFF"}),
      text<&S::db, &db_options::relay_synchronous>("db", "relay_synchronous",
                                                   {"FULL", "NORMAL", "OFF"}),

      secret_bearing(
          text<&S::redis, &conn::where, &endpoint::host>("redis", "host")),
      integer<&S::redis, &conn::where, &endpoint::port>("redis", "port", 1,
                                                        65535),
      optional(text<&S::redis, &conn::username>("redis", "username")),
      secret(text<&S::redis, &conn::password>("redis", "password")),
      optional(text<&S::redis_password_file>("redis", "password_file")),
      // Redis's `databases` is 16 by default but may be set higher.
      integer<&S::redis, &conn::db>("redis", "db", 0, int_max),
      integer<&S::redis, &conn::connect_timeout_ms>(
          "redis", "connect_timeout_ms", 1, dur),
      integer<&S::redis, &conn::io_timeout_ms>("redis", "io_timeout_ms", 1,
                                               dur),
      flag<&S::allow_evicting_redis>("redis", "allow_evicting"),
      integer<&S::redis, &conn::min_replica_acks>("redis", "min_replica_acks",
                                                  0, 100),
      integer<&S::redis, &conn::replica_ack_timeout_ms>(
          "redis", "replica_ack_timeout_ms", 1, dur),
      // Checked as addresses where they are used (cli/redis_credentials).
      text_list<&S::redis_sentinels>("redis", "sentinels"),
      optional(text<&S::redis_master_name>("redis", "master_name")),
      optional(text<&S::redis_sentinel_username>("redis", "sentinel_username")),
      secret(text<&S::redis_sentinel_password>("redis", "sentinel_password")),
      optional(text<&S::redis_sentinel_password_file>(
          "redis", "sentinel_password_file")),

      optional(text<&S::key_prefix>("broker", "key_prefix")),
      text<&S::broker, &keys::queue>("broker", "queue"),
      integer<&S::broker, &keys::partitions>("broker", "partitions", 1, 1024),
      text<&S::broker, &keys::processed>("broker", "processed"),
      text<&S::broker, &keys::aggregate_seq>("broker", "aggregate_seq"),
      text<&S::broker, &keys::counters>("broker", "counters"),
      text<&S::broker, &keys::dead_letter>("broker", "dead_letter"),
      text<&S::broker, &keys::processing_prefix>("broker", "processing_prefix"),
      // Redis refuses bulk strings over 512 MiB (proto-max-bulk-len).
      integer<&S::broker, &keys::max_entry_bytes>("broker", "max_entry_bytes",
                                                  1024, 512LL << 20),
      integer<&S::broker, &keys::max_consume_bytes>(
          "broker", "max_consume_bytes", 1024, 512LL << 20),

      integer<&S::lease, &lease_policy::ttl>("lease", "ttl_ms", 100, dur),
      integer<&S::lease, &lease_policy::batch>("lease", "batch", 1, 10000),
      integer<&S::lease, &lease_policy::max_attempts>("lease", "max_attempts",
                                                      1, int_max),
      integer<&S::lease, &lease_policy::backoff_base>(
          "lease", "backoff_base_ms", 1, dur),
      integer<&S::lease, &lease_policy::backoff_max>("lease", "backoff_max_ms",
                                                     1, dur),

      // Each relay or consumer is a thread with its own connections
      // (fields.hpp, max_workers).
      integer<&S::run, &run_settings::relays>("run", "relays", 0, max_workers),
      integer<&S::run, &run_settings::consumers>("run", "consumers", 0,
                                                 max_workers),
      integer<&S::run, &run_settings::orders>("run", "orders", 0, int64_max),
      probability<&S::run, &run_settings::followup_share>("run",
                                                          "followup_share"),
      integer<&S::run, &run_settings::max_in_flight>("run", "max_in_flight", 1,
                                                     1'000'000),
      integer<&S::run, &run_settings::orders_per_second>(
          "run", "orders_per_second", 0, 10'000'000),
      integer<&S::run, &run_settings::commit_batch>("run", "commit_batch", 1,
                                                    int_max),
      integer<&S::run, &run_settings::commit_delay_ms>("run", "commit_delay_ms",
                                                       0, dur),
      integer<&S::run, &run_settings::poll_interval_ms>(
          "run", "poll_interval_ms", 1, dur),
      integer<&S::run, &run_settings::idle_poll_max_ms>(
          "run", "idle_poll_max_ms", 1, dur),
      // 0 would make BLMOVE block forever and the consumer deaf to shutdown.
      integer<&S::run, &run_settings::consumer_block_ms>(
          "run", "consumer_block_ms", 1, dur),
      integer<&S::run, &run_settings::restart_budget>("run", "restart_budget",
                                                      0, int_max),

      text<&S::consumer, &consumer_settings::unknown_types>(
          "consumer", "unknown_types", {"record", "dead-letter"}),
      // Read and checked where it is used (startup/effects_preflight.hpp).
      optional(text<&S::consumer, &consumer_settings::effects_lua>(
          "consumer", "effects_lua")),
      optional(
          text<&S::consumer, &consumer_settings::sink>("consumer", "sink")),
      optional(text<&S::consumer, &consumer_settings::effects_sql>(
          "consumer", "effects_sql")),

      // The seed stops at 2^63-1: every integer key is read as int64.
      integer<&S::crash, &crash_settings::seed>("crash", "seed", 0, int64_max),
      probability<&S::crash, &crash_settings::relay_after_claim>(
          "crash", "relay_after_claim"),
      probability<&S::crash, &crash_settings::relay_after_publish>(
          "crash", "relay_after_publish"),
      probability<&S::crash, &crash_settings::relay_pause>("crash",
                                                           "relay_pause"),
      probability<&S::crash, &crash_settings::consumer_after_pop>(
          "crash", "consumer_after_pop"),
      probability<&S::crash, &crash_settings::consumer_after_effect>(
          "crash", "consumer_after_effect"),
      probability<&S::crash, &crash_settings::consumer_after_sink_commit>(
          "crash", "consumer_after_sink_commit"),
      integer<&S::crash, &crash_settings::recovery_pause_ms>(
          "crash", "recovery_pause_ms", 0, dur),

      text<&S::log, &log_settings::level>(
          "log", "level", {"trace", "debug", "info", "warn", "error", "off"}),
      text<&S::log, &log_settings::format>("log", "format", {"text", "json"}),
      integer<&S::log, &log_settings::summary_interval_ms>(
          "log", "summary_interval_ms", 100, dur),

      // Checked where it is used (cli/metrics_listen.hpp), as the flags.
      optional(text<&S::metrics_listen>("metrics", "listen")),
  };
}

bool open_ended(const field& f) {
  return f.max == int_max || f.max == int64_max;
}

} // namespace

const std::vector<field>& fields() {
  static const std::vector<field> all = make_fields();
  return all;
}

const std::vector<std::string>& sections() {
  static const std::vector<std::string> all = {"db",    "redis", "broker",
                                               "lease", "run",   "consumer",
                                               "crash", "log",   "metrics"};
  return all;
}

std::string number_text(double value) {
  std::ostringstream out;
  out << std::setprecision(15) << value;
  return out.str();
}

void check_integer(const field& f, std::int64_t value) {
  if (value >= f.min && value <= f.max)
    return;
  auto got = ", got " + std::to_string(value);
  if (open_ended(f) && value < f.min)
    throw config_error(f.path(), "must be >= " + std::to_string(f.min) + got);
  throw config_error(f.path(), "must be between " + std::to_string(f.min) +
                                   " and " + std::to_string(f.max) + got);
}

void check_number(const field& f, double value) {
  // Written so that NaN fails too.
  if (value >= static_cast<double>(f.min) &&
      value <= static_cast<double>(f.max))
    return;
  throw config_error(f.path(), "must be between " + std::to_string(f.min) +
                                   " and " + std::to_string(f.max) + ", got " +
                                   number_text(value));
}

void check_string(const field& f, const std::string& value) {
  if (value.empty() && f.may_be_empty)
    return;
  if (value.empty())
    throw config_error(f.path(), "must not be empty");
  if (f.choices.empty())
    return;
  for (const auto& choice : f.choices)
    if (value == choice)
      return;
  std::string allowed;
  for (const auto& choice : f.choices)
    allowed += (allowed.empty() ? "" : ", ") + choice;
  throw config_error(f.path(), "must be one of " + allowed + ", got \"" +
                                   broker::redact_secrets(value) + "\"");
}

void check_list(const field& f, const std::vector<std::string>& value) {
  for (const auto& item : value)
    if (item.empty())
      throw config_error(f.path(), "must not hold an empty string");
}

void check_field(const field& f, const settings& s) {
  switch (f.type) {
  case kind::integer:
    check_integer(f, f.get_integer(s));
    break;
  case kind::number:
    check_number(f, f.get_number(s));
    break;
  case kind::string:
    check_string(f, f.get_string(s));
    break;
  case kind::boolean: // either value is valid
    break;
  case kind::text_list:
    check_list(f, f.get_list(s));
    break;
  }
}

} // namespace detail

std::string to_json(const settings& s) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const auto& name : detail::sections())
    out[name] = nlohmann::ordered_json::object();
  for (const auto& f : detail::fields()) {
    auto& slot = out[f.section][f.key];
    switch (f.type) {
    case detail::kind::integer:
      slot = f.get_integer(s);
      break;
    case detail::kind::number:
      slot = f.get_number(s);
      break;
    case detail::kind::string:
      // Whatever a settings object holds, what it shows carries no secret.
      if (f.secret)
        slot = f.get_string(s).empty() ? "" : "***";
      else
        slot = f.may_hold_secrets ? broker::redact_secrets(f.get_string(s))
                                  : f.get_string(s);
      break;
    case detail::kind::boolean:
      slot = f.get_boolean(s);
      break;
    case detail::kind::text_list:
      slot = nlohmann::ordered_json::array();
      for (const auto& item : f.get_list(s))
        slot.push_back(broker::redact_secrets(item));
      break;
    }
  }
  return text::json_text(out, 2);
}

} // namespace outbox::config
