#include "broker/redis_address.hpp"

#include <cctype>
#include <charconv>

namespace outbox::broker {

namespace {

constexpr std::string_view plain_scheme = "redis://";
constexpr std::string_view tls_scheme = "rediss://";
constexpr std::string_view sentinel_scheme = "redis-sentinel://";

bool starts_with_any_case(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size())
    return false;
  for (std::size_t i = 0; i < prefix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(text[i])) != prefix[i])
      return false;
  return true;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

/// %XX escapes decoded: how a URI carries a password with '@', ':' or '/'.
std::string percent_decoded(std::string_view text, const char* part) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      out += text[i];
      continue;
    }
    int high = i + 2 < text.size() ? hex_digit(text[i + 1]) : -1;
    int low = i + 2 < text.size() ? hex_digit(text[i + 2]) : -1;
    if (high < 0 || low < 0)
      throw address_error(std::string{"the "} + part +
                          " has a '%' that is not followed by two hex digits "
                          "(write '%25' for a '%')");
    out += static_cast<char>(high * 16 + low);
    i += 2;
  }
  return out;
}

int parse_db(std::string_view digits) {
  int db = -1;
  auto [end, ec] =
      std::from_chars(digits.data(), digits.data() + digits.size(), db);
  if (digits.empty() || ec != std::errc{} ||
      end != digits.data() + digits.size() || db < 0)
    throw address_error("the database after the '/' must be a number 0 or "
                        "more (redis://HOST:PORT/3)");
  return db;
}

/// The parts every redis URI has once its scheme is gone:
/// [USER[:PASSWORD]@]AUTHORITY[/DB], the user information applied to
/// `result`, the database too. Returns the authority.
std::string_view read_userinfo_and_db(std::string_view rest,
                                      redis_address& result) {
  // The userinfo ends at the last '@' (a password with an '@' in it is
  // taken whole, as redact_secrets masks it); the path at the '/' after it.
  auto at = rest.rfind('@');
  std::string_view authority = rest;
  std::string_view path;
  auto slash = rest.find('/', at == std::string_view::npos ? 0 : at + 1);
  if (slash != std::string_view::npos) {
    authority = rest.substr(0, slash);
    path = rest.substr(slash + 1);
  }
  if (at != std::string_view::npos) {
    auto userinfo = authority.substr(0, at);
    authority = authority.substr(at + 1);
    auto colon = userinfo.find(':');
    if (colon == std::string_view::npos) {
      result.password = percent_decoded(userinfo, "password");
    } else {
      auto user = percent_decoded(userinfo.substr(0, colon), "user");
      if (!user.empty())
        result.username = std::move(user);
      result.password = percent_decoded(userinfo.substr(colon + 1), "password");
    }
    if (result.password && result.password->empty())
      result.password.reset();
  }
  if (!path.empty())
    result.db = parse_db(path);
  return authority;
}

/// HOST[:PORT], `port` when left out, as every client does.
std::optional<endpoint> host_and_port(std::string_view authority, int port) {
  bool bracketed =
      !authority.empty() && authority.front() == '[' && authority.back() == ']';
  std::string host_port{authority};
  if (bracketed || authority.rfind(':') == std::string_view::npos)
    host_port += ":" + std::to_string(port);
  return parse_endpoint(host_port);
}

redis_address parse_uri(std::string_view rest) {
  redis_address result;
  if (rest.find_first_of("?#") != std::string_view::npos)
    throw address_error("a query or fragment (?...) is not supported: give "
                        "the user, password and database in the URI itself "
                        "or in the redis section of the config");
  auto where = host_and_port(read_userinfo_and_db(rest, result), 6379);
  if (!where)
    throw address_error("expected a host name or an IP address and a port "
                        "in 1..65535 after the '@' (or after redis://)");
  result.where = *where;
  return result;
}

redis_address parse_sentinel_uri(std::string_view rest) {
  redis_address result;
  auto hash = rest.rfind('#');
  if (hash == std::string_view::npos || hash + 1 == rest.size())
    throw address_error(
        "a redis-sentinel:// address names the master after a '#': "
        "redis-sentinel://HOST[:PORT][,HOST[:PORT]...]#MASTER_NAME");
  auto name = rest.substr(hash + 1);
  if (!valid_master_name(name))
    throw address_error("the master's name after the '#' must be letters, "
                        "digits and . - _ only");
  rest = rest.substr(0, hash);
  if (rest.find('?') != std::string_view::npos)
    throw address_error("a query (?...) is not supported: give the "
                        "sentinels' credentials in the redis section of "
                        "the config");
  sentinel_set set;
  set.master_name = std::string{name};
  auto hosts = read_userinfo_and_db(rest, result);
  while (true) {
    auto comma = hosts.find(',');
    auto one = hosts.substr(0, comma);
    auto where = parse_sentinel_endpoint(one);
    if (!where)
      throw address_error("expected sentinels as HOST[:PORT] separated by "
                          "commas (a host name or an IP address, a port in "
                          "1..65535, 26379 when left out)");
    set.sentinels.push_back(*where);
    if (comma == std::string_view::npos)
      break;
    hosts = hosts.substr(comma + 1);
  }
  result.sentinel = std::move(set);
  return result;
}

} // namespace

bool valid_master_name(std::string_view name) {
  if (name.empty())
    return false;
  for (unsigned char c : name)
    if (std::isalnum(c) == 0 && c != '.' && c != '-' && c != '_')
      return false;
  return true;
}

std::optional<endpoint> parse_sentinel_endpoint(std::string_view text) {
  return host_and_port(text, default_sentinel_port);
}

bool asks_for_tls(std::string_view text) {
  return starts_with_any_case(text, tls_scheme);
}

redis_address parse_redis_address(std::string_view text) {
  if (asks_for_tls(text))
    throw address_error(
        "rediss:// (TLS) is not supported: this build's hiredis has no TLS. "
        "Run a local TLS tunnel to the server (stunnel or spiped, say) and "
        "give its local end as redis://[USER:PASSWORD@]127.0.0.1:PORT");
  if (starts_with_any_case(text, plain_scheme))
    return parse_uri(text.substr(plain_scheme.size()));
  if (starts_with_any_case(text, sentinel_scheme))
    return parse_sentinel_uri(text.substr(sentinel_scheme.size()));
  if (text.find("://") != std::string_view::npos)
    throw address_error("unknown scheme: expected HOST:PORT, "
                        "redis://[USER:PASSWORD@]HOST[:PORT][/DB] or "
                        "redis-sentinel://HOST[:PORT][,...]#MASTER_NAME");
  auto where = parse_endpoint(text);
  if (!where)
    throw address_error(
        "expected HOST:PORT (a host name or an IP address and a port in "
        "1..65535) or redis://[USER:PASSWORD@]HOST[:PORT][/DB]");
  redis_address result;
  result.where = *where;
  return result;
}

} // namespace outbox::broker
