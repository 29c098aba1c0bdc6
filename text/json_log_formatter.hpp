#pragma once

// `log.format = "json"`: each log line one JSON object, for log shippers
// (journald's JSON output, Loki, Elasticsearch) that parse lines rather
// than guess at a text pattern.

#include <spdlog/formatter.h>

#include <memory>
#include <string>

namespace outbox::text {

/// Formats a line as {"ts":"2026-12-05T13:20:00.123Z","level":"warn",
/// "logger":"outbox","msg":"..."} and a line feed: `ts` in UTC with
/// milliseconds, `level` spdlog's short name (trace, debug, info, warning
/// as "warn", error, critical). The message arrives escaped
/// (escaping_sink.hpp); json_text() makes the object valid JSON whatever
/// it holds.
class json_log_formatter final : public spdlog::formatter {
public:
  void format(const spdlog::details::log_msg& msg,
              spdlog::memory_buf_t& dest) override;
  std::unique_ptr<spdlog::formatter> clone() const override;
};

/// One JSON log line (with its line feed) for a message the tool prints
/// itself rather than through spdlog (`outbox run: stopping gracefully`),
/// so that a JSON log holds nothing else: `logger` names who says it.
std::string json_log_line(const std::string& level, const std::string& logger,
                          const std::string& message);

} // namespace outbox::text
