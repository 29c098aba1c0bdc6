#include "broker/key_scan.hpp"

#include "broker/broker_error.hpp"
#include "broker/connection.hpp"

#include <hiredis/hiredis.h>

#include <set>

namespace outbox::broker {

namespace {

/// A SCAN MATCH pattern that matches `prefix` literally, then anything.
std::string prefix_pattern(const std::string& prefix) {
  std::string pattern;
  for (char c : prefix) {
    if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\')
      pattern += '\\';
    pattern += c;
  }
  pattern += '*';
  return pattern;
}

} // namespace

std::vector<std::string> scan_prefix(connection& conn,
                                     const std::string& prefix,
                                     const std::string& type) {
  std::set<std::string> found;
  auto pattern = prefix_pattern(prefix);
  std::string cursor = "0";
  do {
    std::vector<std::string> argv{"SCAN",  cursor,  "MATCH",
                                  pattern, "COUNT", "1000"};
    if (!type.empty())
      argv.insert(argv.end(), {"TYPE", type});
    auto r = conn.command(argv);
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
        r->element[1]->type != REDIS_REPLY_ARRAY)
      throw broker_error(broker_errc::rejected, "unexpected reply to SCAN");
    cursor = reply_text(*r->element[0]);
    auto& keys = *r->element[1];
    for (std::size_t i = 0; i < keys.elements; ++i)
      found.insert(reply_text(*keys.element[i]));
  } while (cursor != "0" && !cursor.empty());
  return {found.begin(), found.end()};
}

bool key_exists(connection& conn, const std::string& key) {
  return conn.command({"EXISTS", key})->integer != 0;
}

} // namespace outbox::broker
