#pragma once

// Helpers for the actors' log lines: "<component> <name>: <what happened>
// (<ids>)". Lines name the rows and entries involved, bounded so that a big
// batch cannot produce a huge line, and an outage of Redis or the database
// is logged when it begins and when it ends rather than on every retry.

#include "storage/types.hpp"

#include <spdlog/common.h>

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace outbox::actors {

/// How many ids a line names before it says "and N more".
inline constexpr std::size_t max_logged_ids = 5;

/// "a, b, c, d, e and 7 more": the first max_logged_ids items of `items`,
/// each rendered by `describe(item)` (a std::string).
template <class Range, class Describe>
std::string bounded_list(const Range& items, Describe describe) {
  std::string text;
  std::size_t count = 0;
  for (const auto& item : items) {
    if (count < max_logged_ids) {
      if (count > 0)
        text += ", ";
      text += describe(item);
    }
    ++count;
  }
  if (count > max_logged_ids)
    text += " and " + std::to_string(count - max_logged_ids) + " more";
  return text;
}

/// `text` made safe for one log line: at most `limit` bytes of it, cut
/// between characters, escaped (text::escaped()). For ids read from data
/// that failed validation.
std::string loggable(std::string_view text, std::size_t limit = 128);

/// One outage of a dependency (Redis, the database) as one actor sees it.
/// A retry loop logs the first failure at warn, the following ones at debug
/// only, and one line at info when a call succeeds again.
class outage {
public:
  /// How an outage ended.
  struct ended {
    storage::millis lasted_ms = 0;
    int failures = 0;
  };

  /// Records a failed call at `now`. True for the first failure of an
  /// outage: the one to log at warn.
  bool failed(storage::millis now);

  /// Records a successful call at `now`; when it ends an outage, how long
  /// that lasted and how many calls failed.
  std::optional<ended> recovered(storage::millis now);

  /// Records a failed call at `now` and says at which level to log it:
  /// warn for the first of an outage, debug for the retries after it.
  spdlog::level::level_enum failure_level(storage::millis now) {
    return failed(now) ? spdlog::level::warn : spdlog::level::debug;
  }

  bool ongoing() const { return failures_ > 0; }

  /// Ends an ongoing outage with one line at info: "COMPONENT NAME: WHAT
  /// again after N ms (F FAILURES)"; without NAME when it is empty, without
  /// the parenthesis when `failures` is. `clock` is read only then.
  void log_end(const std::function<storage::millis()>& clock,
               std::string_view component, std::string_view name,
               std::string_view what, std::string_view failures = {});

private:
  storage::millis since_ = 0;
  int failures_ = 0;
};

} // namespace outbox::actors
