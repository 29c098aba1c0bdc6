#pragma once

// A start-up check's verdict (startup/verdict.hpp) told the way the
// commands speak: its remarks in order (the log, or warnings on stderr),
// then its refusal as an error notice; a check that threw, its remarks.

#include "startup/verdict.hpp"

#include <optional>
#include <string>
#include <vector>

namespace outbox::cli {

/// Tells `verdict` after `who` ("outbox run"); returns the exit code when
/// the command must stop (2 for refused_usage, 1 for refused_failure).
std::optional<int> tell_verdict(const startup::verdict& verdict,
                                const std::string& who);

/// Tells remarks after `who`: debug and info to the log, warnings on
/// stderr.
void tell_remarks(const std::vector<startup::remark>& remarks,
                  const std::string& who);

/// Tells the verdict `check()` returns, as tell_verdict does. When the
/// check throws after it said remarks (startup::keeping_remarks), tells
/// those, then lets the error go on as it was.
template <typename Check>
std::optional<int> tell_check(Check&& check, const std::string& who) {
  try {
    return tell_verdict(check(), who);
  } catch (const startup::gathered_remarks& gathered) {
    tell_remarks(gathered.remarks(), who);
    throw;
  }
}

} // namespace outbox::cli
