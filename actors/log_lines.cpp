#include "actors/log_lines.hpp"

#include <algorithm>

namespace outbox::actors {

std::string loggable(std::string_view text, std::size_t limit) {
  std::string result;
  auto cut = std::min(text.size(), limit);
  result.reserve(cut + 3);
  for (std::size_t i = 0; i < cut; ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    result += (c < 0x20 || c == 0x7f) ? '?' : text[i];
  }
  if (cut < text.size())
    result += "...";
  return result;
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
