#pragma once

// Refusals of the pipeline's commands that the actors of one run met: a
// Redis that answers, but refuses what the relays or consumers send in a
// way no server state explains (an ACL without the command, a proxy that
// does not know it). Retrying is right for a passing one; one that keeps
// coming back must be named, since waiting does not end it.

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

namespace outbox::metrics {

/// One refusal as the run met it: who refused, in Redis's own words, and
/// over how long.
struct refusal {
  /// "HOST:PORT".
  std::string where;
  /// Redis's reply ("NOPERM this user has no permissions to run the
  /// 'rpush' command").
  std::string words;
  /// Wall clock ms of the first and the latest time it was met in this
  /// stretch, and how often.
  std::int64_t first = 0;
  std::int64_t last = 0;
  std::int64_t times = 0;
};

/// Thread-safe: every relay, consumer and the coordinator note into one.
class refusal_log {
public:
  /// A refusal not met again within `horizon_ms` is over; one met for at
  /// least that long is standing. The coordinator sets its stall timeout.
  void set_horizon(std::int64_t horizon_ms);

  /// Records a refusal met at `now`.
  void note(const std::string& where, const std::string& words,
            std::int64_t now);

  /// The refusal met, again and again, for at least the horizon and still
  /// within it: the first such, by when it began. Nothing otherwise.
  std::optional<refusal> standing(std::int64_t now) const;

  /// The same, once per stretch: for the one line that names it.
  std::optional<refusal> standing_unannounced(std::int64_t now);

  /// The refusal met last, within the horizon: what a stalled run shows
  /// before it is standing.
  std::optional<refusal> latest(std::int64_t now) const;

private:
  struct entry {
    refusal seen;
    bool announced = false;
  };
  bool is_standing(const entry& e, std::int64_t now) const;

  mutable std::mutex mutex_;
  std::int64_t horizon_ms_ = 30'000;
  /// By (where, words); a few at most (one per kind of command refused).
  std::map<std::pair<std::string, std::string>, entry> entries_;
};

} // namespace outbox::metrics
