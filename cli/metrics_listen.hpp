#pragma once

#include <cstdint>
#include <string>

namespace outbox::cli {

/// Where `outbox run` serves its metrics.
struct metrics_listen {
  /// An IPv4 address: 127.0.0.1 (the default), 0.0.0.0 (every interface)
  /// or one of the machine's.
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
};

/// --metrics-listen HOST:PORT, or --metrics-port PORT on loopback, else
/// the config's metrics.listen (`configured`, HOST:PORT); nothing served
/// when none is given (port 0). Throws config_error naming the flag or the
/// key for a malformed value, or both flags at once.
metrics_listen resolve_metrics_listen(const std::string& listen, int port,
                                      const std::string& configured = "");

} // namespace outbox::cli
