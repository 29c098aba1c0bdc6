#pragma once

// What a start-up check decides, for the command to tell: the checks of
// this folder judge a start (Redis's settings and ACL, the keyspace, the
// partition count, a consumer's effects and sink) and never print, so each
// can be asked and its answer asserted on; cli prints the verdict (notices
// on stderr, the log) and turns it into the exit code.

#include <string>
#include <vector>

namespace outbox::startup {

/// Whether the start goes on, and if not, which kind of stop it is.
enum class outcome {
  /// Nothing stops it.
  go,
  /// What was asked cannot work here: a setting, a file, another
  /// database's keyspace, another process's partition count (exit 2).
  refused_usage,
  /// What it would run on fails it: a Redis that may evict, a sink that
  /// cannot be reached (exit 1).
  refused_failure,
};

/// A line said on the way, before any refusal.
struct remark {
  enum class level { debug, info, warning };
  level said_as;
  std::string text;
};

struct verdict {
  outcome result = outcome::go;
  /// Why the start must stop; empty while it may go on.
  std::string refusal;
  /// In the order they arose; each said once.
  std::vector<remark> remarks;

  bool refused() const { return result != outcome::go; }
  /// The warnings among the remarks, in order.
  std::vector<std::string> warnings() const;

  void warn(std::string text);
  void inform(std::string text);
  void debug(std::string text);
  /// Stops the start: `kind` is refused_usage or refused_failure.
  void refuse(outcome kind, std::string why);
};

} // namespace outbox::startup
