#include "cli/metrics_listen.hpp"

#include "config/settings.hpp"
#include "text/terminal_text.hpp"

#include <arpa/inet.h>

#include <charconv>

namespace outbox::cli {

namespace {

/// HOST:PORT as `name` (a flag or a key) gave it.
metrics_listen parse_listen(const std::string& listen,
                            const std::string& name) {
  metrics_listen where;
  auto refuse = [&listen, &name] {
    return config::config_error(
        name,
        "expected HOST:PORT with an IPv4 address (127.0.0.1, 0.0.0.0 or one "
        "of this machine's) and a port in 1..65535, got '" +
            text::escaped(listen) + "'");
  };
  auto colon = listen.rfind(':');
  if (colon == std::string::npos)
    throw refuse();
  auto host = listen.substr(0, colon);
  auto digits = listen.substr(colon + 1);
  // The HTTP server binds numeric addresses only: no names to resolve.
  in_addr parsed{};
  if (::inet_pton(AF_INET, host.c_str(), &parsed) != 1)
    throw refuse();
  int value = 0;
  auto [end, ec] =
      std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || ec != std::errc{} ||
      end != digits.data() + digits.size() || value < 1 || value > 65535)
    throw refuse();
  where.host = host;
  where.port = static_cast<std::uint16_t>(value);
  return where;
}

} // namespace

metrics_listen resolve_metrics_listen(const std::string& listen, int port,
                                      const std::string& configured) {
  if (!listen.empty() && port != 0)
    throw config::config_error("--metrics-listen",
                               "give it or --metrics-port, not both");
  if (!listen.empty())
    return parse_listen(listen, "--metrics-listen");
  if (port != 0) {
    metrics_listen where;
    where.port = static_cast<std::uint16_t>(port);
    return where;
  }
  if (!configured.empty())
    return parse_listen(configured, "metrics.listen");
  return {};
}

} // namespace outbox::cli
