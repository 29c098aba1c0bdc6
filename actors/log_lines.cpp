#include "actors/log_lines.hpp"

#include "text/terminal_text.hpp"

#include <spdlog/spdlog.h>

namespace outbox::actors {

std::string loggable(std::string_view text, std::size_t limit) {
  auto cut = text::utf8_cut(text, limit);
  return text::escaped(text.substr(0, cut)) + (cut < text.size() ? "..." : "");
}

bool outage::failed(storage::millis now) {
  if (failures_++ == 0) {
    since_ = now;
    return true;
  }
  return false;
}

std::optional<outage::ended> outage::recovered(storage::millis now) {
  if (failures_ == 0)
    return std::nullopt;
  ended result{now - since_, failures_};
  failures_ = 0;
  since_ = 0;
  return result;
}

void outage::log_end(const std::function<storage::millis()>& clock,
                     std::string_view component, std::string_view name,
                     std::string_view what, std::string_view failures) {
  if (!ongoing())
    return;
  auto end = recovered(clock());
  std::string who{component};
  if (!name.empty())
    who.append(" ").append(name);
  if (failures.empty())
    spdlog::info("{}: {} again after {} ms", who, what, end->lasted_ms);
  else
    spdlog::info("{}: {} again after {} ms ({} {})", who, what, end->lasted_ms,
                 end->failures, failures);
}

} // namespace outbox::actors
