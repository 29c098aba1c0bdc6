// `outbox status --check`: the verdict a probe or a script acts on.

#include "cli/status_snapshot.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <regex>

namespace outbox::cli {

health judge(const status_snapshot& snapshot,
             storage::millis max_unpublished_age) {
  health verdict;
  verdict.max_unpublished_age = max_unpublished_age;
  const auto& db = snapshot.outbox;
  if (auto failed = db.count("FAILED"); failed > 0)
    verdict.problems.push_back(std::to_string(failed) + " FAILED row" +
                               (failed == 1 ? "" : "s") +
                               " (outbox failed lists them)");
  auto unpublished = db.count("PENDING") + db.count("SENDING");
  if (unpublished > 0 && db.oldest_unpublished_age > max_unpublished_age)
    verdict.problems.push_back("the oldest unpublished row is " +
                               rounded_duration(db.oldest_unpublished_age) +
                               " old (over " +
                               rounded_duration(max_unpublished_age) + ")");
  if (!snapshot.redis)
    verdict.problems.push_back("Redis unavailable: " + snapshot.redis_error);
  return verdict;
}

std::string relay_process_state(const std::string& owner) {
  // worker_name(): relay-<host>-<pid>-<index>-<restarts>.
  static const std::regex relay_name{R"(^relay-(.+)-(\d+)-\d+-\d+$)"};
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

} // namespace outbox::cli
