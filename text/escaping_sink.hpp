#pragma once

// Log lines carry ids, keys and error messages read from Redis and the
// database. Rather than trust every call site to escape them, the process's
// logger writes through this sink, which escapes each message once, on its
// way to the real sink.

#include <spdlog/sinks/sink.h>

#include <memory>
#include <string>

namespace outbox::text {

/// Forwards every log message to `inner` with its text escaped (see
/// escaped()): a log line never carries a raw ESC, a line break or a byte
/// that is not UTF-8. The line's own decorations (time, level, colours)
/// are added by `inner` afterwards and stay as they are.
class escaping_sink final : public spdlog::sinks::sink {
public:
  explicit escaping_sink(std::shared_ptr<spdlog::sinks::sink> inner);

  void log(const spdlog::details::log_msg& msg) override;
  void flush() override;
  void set_pattern(const std::string& pattern) override;
  void set_formatter(std::unique_ptr<spdlog::formatter> formatter) override;

private:
  std::shared_ptr<spdlog::sinks::sink> inner_;
};

} // namespace outbox::text
