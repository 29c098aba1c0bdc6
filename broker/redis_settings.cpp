#include "broker/redis_settings.hpp"

#include "broker/connection.hpp"

#include <hiredis/hiredis.h>

#include <vector>

namespace outbox::broker {

namespace {

/// The value of a one-parameter CONFIG GET (a [name, value] array);
/// nothing when the reply is an error or empty (an unknown parameter).
std::optional<std::string> config_value(const redisReply& r) {
  if (r.type != REDIS_REPLY_ARRAY || r.elements < 2)
    return std::nullopt;
  return reply_text(*r.element[1]);
}

} // namespace

bool redis_settings::may_evict() const {
  return maxmemory_policy && *maxmemory_policy != "noeviction";
}

bool redis_settings::persists_nothing() const {
  return appendonly && save && *appendonly == "no" && save->empty();
}

redis_settings read_redis_settings(connection& conn) {
  // One CONFIG GET per parameter: several names in one call are Redis 7
  // only, and each reply pairs a name with its value anyway.
  const std::vector<std::vector<std::string>> commands = {
      {"CONFIG", "GET", "maxmemory-policy"},
      {"CONFIG", "GET", "appendonly"},
      {"CONFIG", "GET", "appendfsync"},
      {"CONFIG", "GET", "save"},
      {"ROLE"},
  };
  auto replies = conn.pipeline(commands);
  redis_settings settings;
  if (replies[0]->type == REDIS_REPLY_ERROR) {
    settings.config_error = reply_text(*replies[0]);
    // Redis ends "unknown command" errors with a space.
    while (!settings.config_error.empty() &&
           settings.config_error.back() == ' ')
      settings.config_error.pop_back();
  }
  settings.maxmemory_policy = config_value(*replies[0]);
  settings.appendonly = config_value(*replies[1]);
  settings.appendfsync = config_value(*replies[2]);
  settings.save = config_value(*replies[3]);
  const auto& role = *replies[4];
  if (role.type == REDIS_REPLY_ARRAY && role.elements > 0)
    settings.role = reply_text(*role.element[0]);
  if (settings.role == "master" && role.elements > 2 &&
      role.element[2]->type == REDIS_REPLY_ARRAY)
    settings.replicas = role.element[2]->elements;
  return settings;
}

} // namespace outbox::broker
