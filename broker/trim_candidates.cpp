#include "broker/trim_candidates.hpp"

#include "broker/queued_events.hpp"

#include <algorithm>

namespace outbox::broker {

trim_candidates::trim_candidates(connection& redis, const keys& names,
                                 std::int64_t cutoff_ms, std::size_t batch)
    : redis_(redis), names_(names), cutoff_(cutoff_ms), batch_(batch),
      // Each read of the lists costs their whole length: with many records
      // to trim, read them once per this many (about 100 bytes each).
      limit_(std::max<std::size_t>(batch, 10000)), trimmer_(redis, names) {}

void trim_candidates::add(std::vector<std::string> ids) {
  for (auto& id : ids) {
    if (!ids_.insert(std::move(id)).second)
      ++counts_.repeated;
    if (ids_.size() >= limit_)
      flush();
  }
}

void trim_candidates::flush() {
  if (ids_.empty())
    return;
  auto queued = queued_among(redis_, names_, ids_);
  std::vector<std::string> doomed;
  for (const auto& id : ids_) {
    if (queued.count(id) != 0)
      ++counts_.queued;
    else
      doomed.push_back(id);
  }
  ids_.clear();
  for (std::size_t from = 0; from < doomed.size(); from += batch_) {
    auto to = std::min(doomed.size(), from + batch_);
    auto done =
        trimmer_.trim(cutoff_, {doomed.begin() + from, doomed.begin() + to});
    counts_.trimmed += done.trimmed;
    counts_.kept_other += done.kept - done.gone;
    counts_.gone += done.gone;
    ++counts_.batches;
  }
}

} // namespace outbox::broker
