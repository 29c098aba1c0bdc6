#pragma once

// What the long-running commands say on stderr themselves, outside the
// log (`outbox run: running; SIGINT or SIGTERM stops it gracefully`):
// text lines, or JSON log lines under log.format "json", so that a log
// shipper reading a service's stderr gets nothing it cannot parse.

#include <string>

namespace outbox::cli {

/// Says "`who`: `message`" on stderr, or one JSON log line (level `level`,
/// logger `who`) once use_json_notices(true). `message` is escaped.
void notice(const std::string& who, const std::string& message,
            const char* level = "info");

/// Says "`who`: warning: `message`", or a JSON log line at level warn.
void warning(const std::string& who, const std::string& message);

/// Set by apply_logging from log.format.
void use_json_notices(bool json);

} // namespace outbox::cli
