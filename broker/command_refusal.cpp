#include "broker/command_refusal.hpp"

namespace outbox::broker {

bool refuses_the_command(std::string_view error) {
  auto starts = [&](std::string_view prefix) {
    return error.substr(0, prefix.size()) == prefix;
  };
  // Inside a script Redis 7.0 words an ACL refusal of a redis.call as
  // ERR, not NOPERM.
  return starts("NOPERM") || starts("ERR unknown command") ||
         starts("ERR unknown subcommand") ||
         starts("ERR The user executing the script can't");
}

} // namespace outbox::broker
