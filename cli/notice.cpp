#include "cli/notice.hpp"

#include "text/json_log_formatter.hpp"
#include "text/terminal_text.hpp"

#include <atomic>
#include <iostream>

namespace outbox::cli {

namespace {

std::atomic<bool> json_notices{false};

} // namespace

void notice(const std::string& who, const std::string& message,
            const char* level) {
  if (json_notices)
    std::cerr << text::json_log_line(level, who, text::escaped(message))
              << std::flush;
  else
    std::cerr << who << ": " << text::escaped(message) << '\n';
}

void warning(const std::string& who, const std::string& message) {
  notice(who, json_notices ? message : "warning: " + message, "warn");
}

void use_json_notices(bool json) {
  json_notices = json;
}

} // namespace outbox::cli
