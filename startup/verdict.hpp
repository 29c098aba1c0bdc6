#pragma once

// What a start-up check decides, for the command to tell: the checks of
// this folder judge a start (Redis's settings and ACL, the keyspace, the
// partition count, a consumer's effects and sink) and never print, so each
// can be asked and its answer asserted on; cli prints the verdict (notices
// on stderr, the log) and turns it into the exit code.

#include <string>
#include <utility>
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

/// The remarks a check had said when it threw: keeping_remarks throws the
/// error the check met as a class derived from both that error and this,
/// so whoever catches the error's type catches it as before, and whoever
/// tells verdicts (cli's tell_check) can tell these first instead of
/// losing them (a merge done, then Redis lost).
class gathered_remarks {
public:
  explicit gathered_remarks(std::vector<remark> remarks)
      : remarks_(std::move(remarks)) {}
  virtual ~gathered_remarks() = default;

  const std::vector<remark>& remarks() const noexcept { return remarks_; }

private:
  std::vector<remark> remarks_;
};

/// `Error` as the check met it, carrying the remarks said before.
template <typename Error>
class with_remarks final : public Error, public gathered_remarks {
public:
  with_remarks(const Error& error, std::vector<remark> remarks)
      : Error(error), gathered_remarks(std::move(remarks)) {}
};

/// Runs `check(judged)` on a fresh verdict and returns it. When the check
/// throws an `Error` after it said remarks, throws that error again as
/// with_remarks<Error>; before any remark, lets it go as it was. `Error`
/// must be the type thrown, not a base of it: the copy is an `Error`.
template <typename Error, typename Check>
verdict keeping_remarks(Check&& check) {
  verdict judged;
  try {
    check(judged);
  } catch (const Error& error) {
    if (judged.remarks.empty())
      throw;
    throw with_remarks<Error>(error, std::move(judged.remarks));
  }
  return judged;
}

} // namespace outbox::startup
