#include "broker/trim_candidates.hpp"

#include "broker/queued_events.hpp"

#include <algorithm>

namespace outbox::broker {

trim_candidates::trim_candidates(connection& redis, const keys& names,
                                 std::int64_t cutoff_ms, std::size_t batch,
                                 trim_totals& totals)
    : redis_(redis), names_(names), cutoff_(cutoff_ms), batch_(batch),
      // Each read of the lists costs their whole length: with many records
      // to trim, read them once per this many (about 100 bytes each).
      limit_(std::max<std::size_t>(batch, 10000)), trimmer_(redis, names),
      totals_(totals) {}

void trim_candidates::add(std::vector<std::string> ids) {
  for (auto& id : ids) {
    // Returned twice by the scan: counted once.
    if (!ids_.insert(std::move(id)).second)
      --totals_.scanned;
    if (ids_.size() >= limit_)
      flush();
  }
}

void trim_candidates::flush() {
  if (ids_.empty())
    return;
  auto doomed = not_queued(redis_, names_, ids_, totals_.kept_queued);
  ids_.clear();
  for (std::size_t from = 0; from < doomed.size(); from += batch_) {
    auto to = std::min(doomed.size(), from + batch_);
    auto done =
        trimmer_.trim(cutoff_, {doomed.begin() + from, doomed.begin() + to});
    totals_.trimmed += done.trimmed;
    // A record the scan returned twice (HSCAN may, while Redis resizes
    // the hash) was counted when first seen and is gone now.
    totals_.kept_other += done.kept - done.gone;
    totals_.scanned -= done.gone;
    ++totals_.batches;
  }
}

} // namespace outbox::broker
