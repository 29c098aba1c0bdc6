#pragma once

// How a user names a Redis: HOST:PORT, or the URI every Redis client takes,
// redis://[USER:PASSWORD@]HOST[:PORT][/DB], for the managed and shared
// servers that want a password, an ACL user and a logical database, or
// redis-sentinel://...#NAME for a master that Sentinel fails over.

#include "broker/connection.hpp"

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace outbox::broker {

/// What an address gives; a part it leaves out is nothing, so that the
/// config's value stays (redis.username, redis.db...).
struct redis_address {
  endpoint where;
  /// A redis-sentinel:// address: the sentinels and the master's name
  /// (`where` is then whatever they name).
  std::optional<sentinel_set> sentinel;
  std::optional<std::string> username;
  std::optional<std::string> password;
  std::optional<int> db;
};

/// Why an address was refused. The message never holds the text itself
/// (it may carry a password): the caller quotes it through redact_secrets.
class address_error : public std::invalid_argument {
public:
  using std::invalid_argument::invalid_argument;
};

/// True when `text` asks for TLS (rediss://), which this build cannot do.
bool asks_for_tls(std::string_view text);

/// The port a sentinel listens on when an address leaves it out.
inline constexpr int default_sentinel_port = 26379;

/// True for a name Sentinel monitors a master under that we accept:
/// letters, digits and . - _ (what goes into `sentinel monitor NAME`).
bool valid_master_name(std::string_view name);

/// Parses a sentinel's HOST[:PORT] (26379 when left out); nothing when
/// malformed.
std::optional<endpoint> parse_sentinel_endpoint(std::string_view text);

/// Parses HOST:PORT, redis://[USER[:PASSWORD]@]HOST[:PORT][/DB] (the port
/// 6379 when left out; USER and PASSWORD percent-decoded; userinfo without
/// a ':' is a password alone, as redis-cli reads it), or
/// redis-sentinel://[USER[:PASSWORD]@]HOST[:PORT][,HOST[:PORT]...][/DB]#NAME
/// (the form Lettuce takes; each port 26379 when left out; the user and
/// password are the master's, as in redis://). Throws address_error.
redis_address parse_redis_address(std::string_view text);

} // namespace outbox::broker
