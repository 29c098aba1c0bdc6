#include "text/escaping_sink.hpp"

#include "text/terminal_text.hpp"

#include <string_view>
#include <utility>

namespace outbox::text {

escaping_sink::escaping_sink(std::shared_ptr<spdlog::sinks::sink> inner)
    : inner_(std::move(inner)) {}

void escaping_sink::log(const spdlog::details::log_msg& msg) {
  auto text = escaped(std::string_view{msg.payload.data(), msg.payload.size()});
  auto copy = msg;
  copy.payload = spdlog::string_view_t{text.data(), text.size()};
  inner_->log(copy);
}

void escaping_sink::flush() {
  inner_->flush();
}

void escaping_sink::set_pattern(const std::string& pattern) {
  inner_->set_pattern(pattern);
}

void escaping_sink::set_formatter(
    std::unique_ptr<spdlog::formatter> formatter) {
  inner_->set_formatter(std::move(formatter));
}

} // namespace outbox::text
