#include "text/json_log_formatter.hpp"

#include "text/json_text.hpp"
#include "text/utc_time.hpp"

#include <nlohmann/json.hpp>

#include <chrono>

namespace outbox::text {

namespace {

std::string line_of(std::chrono::system_clock::time_point at,
                    const std::string& level, const std::string& logger,
                    const std::string& message) {
  nlohmann::ordered_json line{
      {"ts", utc_time(std::chrono::duration_cast<std::chrono::milliseconds>(
                          at.time_since_epoch())
                          .count())},
      {"level", level},
      {"logger", logger},
      {"msg", message}};
  return json_text(line) + "\n";
}

} // namespace

void json_log_formatter::format(const spdlog::details::log_msg& msg,
                                spdlog::memory_buf_t& dest) {
  // spdlog says "warning"; every other level name is the one log.level
  // takes, so use that one here too.
  auto name = spdlog::level::to_string_view(msg.level);
  std::string level = msg.level == spdlog::level::warn
                          ? "warn"
                          : std::string{name.data(), name.size()};
  auto line =
      line_of(msg.time, level,
              std::string{msg.logger_name.data(), msg.logger_name.size()},
              std::string{msg.payload.data(), msg.payload.size()});
  dest.append(line.data(), line.data() + line.size());
}

std::unique_ptr<spdlog::formatter> json_log_formatter::clone() const {
  return std::make_unique<json_log_formatter>();
}

std::string json_log_line(const std::string& level, const std::string& logger,
                          const std::string& message) {
  return line_of(std::chrono::system_clock::now(), level, logger, message);
}

} // namespace outbox::text
