#include "startup/verdict.hpp"

#include <utility>

namespace outbox::startup {

std::vector<std::string> verdict::warnings() const {
  std::vector<std::string> lines;
  for (const auto& r : remarks)
    if (r.said_as == remark::level::warning)
      lines.push_back(r.text);
  return lines;
}

void verdict::warn(std::string text) {
  remarks.push_back({remark::level::warning, std::move(text)});
}

void verdict::inform(std::string text) {
  remarks.push_back({remark::level::info, std::move(text)});
}

void verdict::debug(std::string text) {
  remarks.push_back({remark::level::debug, std::move(text)});
}

void verdict::refuse(outcome kind, std::string why) {
  result = kind;
  refusal = std::move(why);
}

} // namespace outbox::startup
