#include "metrics/refusal_log.hpp"

#include <algorithm>

namespace outbox::metrics {

namespace {

/// Words vary little (one per command or key refused); past this many, the
/// refusal met longest ago makes room, so a log fed forever stays small.
constexpr std::size_t most_refusals = 32;

} // namespace

void refusal_log::set_horizon(std::int64_t horizon_ms) {
  std::lock_guard<std::mutex> lock{mutex_};
  horizon_ms_ = horizon_ms;
}

void refusal_log::note(const std::string& where, const std::string& words,
                       std::int64_t now) {
  std::lock_guard<std::mutex> lock{mutex_};
  auto key = std::make_pair(where, words);
  auto found = entries_.find(key);
  if (found == entries_.end()) {
    if (entries_.size() >= most_refusals) {
      auto oldest = entries_.begin();
      for (auto i = entries_.begin(); i != entries_.end(); ++i)
        if (i->second.seen.last < oldest->second.seen.last)
          oldest = i;
      entries_.erase(oldest);
    }
    found = entries_.emplace(key, entry{{where, words, now, now, 0}}).first;
  }
  auto& e = found->second;
  // Not met for the horizon: that stretch ended (the ACL was fixed, then
  // broken again), this is a new one.
  if (now - e.seen.last > horizon_ms_)
    e = entry{{where, words, now, now, 0}};
  e.seen.last = std::max(e.seen.last, now);
  ++e.seen.times;
}

bool refusal_log::is_standing(const entry& e, std::int64_t now) const {
  return e.seen.times >= 2 && now - e.seen.first >= horizon_ms_ &&
         now - e.seen.last <= horizon_ms_;
}

std::optional<refusal> refusal_log::standing(std::int64_t now) const {
  std::lock_guard<std::mutex> lock{mutex_};
  const entry* first = nullptr;
  for (const auto& [key, e] : entries_)
    if (is_standing(e, now) && (!first || e.seen.first < first->seen.first))
      first = &e;
  if (!first)
    return std::nullopt;
  return first->seen;
}

std::optional<refusal> refusal_log::standing_unannounced(std::int64_t now) {
  std::lock_guard<std::mutex> lock{mutex_};
  for (auto& [key, e] : entries_)
    if (!e.announced && is_standing(e, now)) {
      e.announced = true;
      return e.seen;
    }
  return std::nullopt;
}

std::optional<refusal> refusal_log::latest(std::int64_t now) const {
  std::lock_guard<std::mutex> lock{mutex_};
  const entry* last = nullptr;
  for (const auto& [key, e] : entries_)
    if (now - e.seen.last <= horizon_ms_ &&
        (!last || e.seen.last > last->seen.last))
      last = &e;
  if (!last)
    return std::nullopt;
  return last->seen;
}

} // namespace outbox::metrics
