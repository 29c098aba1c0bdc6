#include "actors/log_lines.hpp"

#include "text/terminal_text.hpp"

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

} // namespace outbox::actors
