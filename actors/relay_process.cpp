#include "actors/relay_process.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <regex>

namespace outbox::actors {

std::string relay_process_state(const std::string& owner) {
  // worker_name(): relay-<host>-<pid>.<start>-<index>-<restarts>; names
  // from before <start> existed have none.
  static const std::regex relay_name{
      R"(^relay-(.+)-(\d+)(\.[0-9a-z]+)?-\d+-\d+$)"};
  std::smatch parts;
  if (!std::regex_match(owner, parts, relay_name))
    return "";
  char host[256] = "";
  if (::gethostname(host, sizeof host - 1) != 0 || parts[1].str() != host)
    return "";
  auto pid = std::strtol(parts[2].str().c_str(), nullptr, 10);
  if (pid <= 0 || ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH)
    return "";
  return "gone";
}

} // namespace outbox::actors
