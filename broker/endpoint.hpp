#pragma once

// Where a Redis (or a Redis Sentinel) listens, as a user writes it.

#include <optional>
#include <string>
#include <string_view>

namespace outbox::broker {

/// Where Redis listens.
struct endpoint {
  std::string host = "127.0.0.1";
  int port = 6379;

  /// "host:port" for messages and logs, secrets masked (redact_secrets).
  std::string to_string() const;
};

/// True for a host name or an IP address: letters, digits and . - _ : %
/// only. Refuses a URI or user information ("redis://u:pw@h", "u:pw@h"):
/// such a host would go to the resolver, password included (a URI is read
/// by parse_redis_address, broker/redis_address.hpp).
bool valid_host(std::string_view host);

/// Parses "HOST:PORT"; nothing when malformed (no colon, port not 1..65535,
/// not a valid_host).
std::optional<endpoint> parse_endpoint(std::string_view text);

} // namespace outbox::broker
