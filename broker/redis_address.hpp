#pragma once

// How a user names a Redis: HOST:PORT, or the URI every Redis client takes,
// redis://[USER:PASSWORD@]HOST[:PORT][/DB], for the managed and shared
// servers that want a password, an ACL user and a logical database.

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

/// Parses HOST:PORT or redis://[USER[:PASSWORD]@]HOST[:PORT][/DB] (the port
/// 6379 when left out; USER and PASSWORD percent-decoded; userinfo without
/// a ':' is a password alone, as redis-cli reads it). Throws address_error.
redis_address parse_redis_address(std::string_view text);

} // namespace outbox::broker
