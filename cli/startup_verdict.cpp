#include "cli/startup_verdict.hpp"

#include "cli/exit_codes.hpp"
#include "cli/notice.hpp"

#include <spdlog/spdlog.h>

namespace outbox::cli {

void tell_remarks(const std::vector<startup::remark>& remarks,
                  const std::string& who) {
  using level = startup::remark::level;
  for (const auto& remark : remarks) {
    switch (remark.said_as) {
    case level::debug:
      spdlog::debug("{}: {}", who, remark.text);
      break;
    case level::info:
      spdlog::info("{}: {}", who, remark.text);
      break;
    case level::warning:
      warning(who, remark.text);
      break;
    }
  }
}

std::optional<int> tell_verdict(const startup::verdict& verdict,
                                const std::string& who) {
  tell_remarks(verdict.remarks, who);
  switch (verdict.result) {
  case startup::outcome::go:
    return std::nullopt;
  case startup::outcome::refused_usage:
    notice(who, verdict.refusal, "error");
    return exit_usage;
  case startup::outcome::refused_failure:
    notice(who, verdict.refusal, "error");
    return exit_failure;
  }
  return std::nullopt;
}

} // namespace outbox::cli
