#include "storage/db_options.hpp"

namespace outbox::storage {

namespace {

/// `uri` with the password of its authority (user:password@) and of a
/// password= parameter left out.
std::string without_password(std::string uri) {
  auto scheme_end = uri.find("://");
  auto authority = scheme_end == std::string::npos ? 0 : scheme_end + 3;
  // The last '@' before the path: a password may hold a raw '@' (or '?',
  // which libpq reads as part of it too).
  auto path = uri.find('/', authority);
  auto at =
      uri.rfind('@', path == std::string::npos ? std::string::npos : path);
  if (at != std::string::npos && at >= authority) {
    auto colon = uri.find(':', authority);
    if (colon != std::string::npos && colon < at)
      uri.erase(colon, at - colon);
  }
  // password= and sslpassword= (the client key's passphrase).
  for (auto key = uri.find("password=", authority); key != std::string::npos;
       key = uri.find("password=", key + 1)) {
    auto start =
        key >= 3 && uri.compare(key - 3, 3, "ssl") == 0 ? key - 3 : key;
    if (start == 0 || (uri[start - 1] != '?' && uri[start - 1] != '&'))
      continue;
    auto value = key + 9;
    auto end = uri.find('&', value);
    uri.replace(value,
                end == std::string::npos ? std::string::npos : end - value,
                "(hidden)");
  }
  return uri;
}

} // namespace

std::string db_options::display_name() const {
  return postgres() ? without_password(path) : path;
}

} // namespace outbox::storage
