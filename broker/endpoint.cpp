#include "broker/endpoint.hpp"

#include "broker/redact.hpp"

#include <cctype>
#include <charconv>

namespace outbox::broker {

std::string endpoint::to_string() const {
  return redact_secrets(host + ":" + std::to_string(port));
}

bool valid_host(std::string_view host) {
  if (host.empty())
    return false;
  for (unsigned char c : host)
    if (std::isalnum(c) == 0 && c != '.' && c != '-' && c != '_' && c != ':' &&
        c != '%')
      return false;
  return true;
}

std::optional<endpoint> parse_endpoint(std::string_view text) {
  auto colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0)
    return std::nullopt;
  auto digits = text.substr(colon + 1);
  int port = 0;
  auto [end, ec] =
      std::from_chars(digits.data(), digits.data() + digits.size(), port);
  if (digits.empty() || ec != std::errc{} ||
      end != digits.data() + digits.size() || port < 1 || port > 65535)
    return std::nullopt;
  auto host = text.substr(0, colon);
  // "[::1]:6379": hiredis wants the address without brackets.
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  if (!valid_host(host))
    return std::nullopt;
  endpoint result;
  result.host = std::string{host};
  result.port = port;
  return result;
}

} // namespace outbox::broker
