#pragma once

// A start-up check's verdict (startup/verdict.hpp) told the way the
// commands speak: its remarks in order (the log, or warnings on stderr),
// then its refusal as an error notice.

#include "startup/verdict.hpp"

#include <optional>
#include <string>

namespace outbox::cli {

/// Tells `verdict` after `who` ("outbox run"); returns the exit code when
/// the command must stop (2 for refused_usage, 1 for refused_failure).
std::optional<int> tell_verdict(const startup::verdict& verdict,
                                const std::string& who);

} // namespace outbox::cli
