#include "bench/trim_check.hpp"

namespace outbox::bench {

std::string trim_shortfall(const broker::trim_totals& t, std::int64_t records,
                           std::int64_t left) {
  auto kept = t.kept_young + t.kept_queued + t.kept_unpublished + t.kept_other;
  if (t.trimmed == records && t.scanned == records && kept == 0 && left == 0)
    return "";
  return "trim forgot " + std::to_string(t.trimmed) + " of " +
         std::to_string(records) + " delivered events' records (scanned " +
         std::to_string(t.scanned) + ", kept " + std::to_string(kept) +
         " young " + std::to_string(t.kept_young) + ", queued " +
         std::to_string(t.kept_queued) + ", unpublished " +
         std::to_string(t.kept_unpublished) + ", other " +
         std::to_string(t.kept_other) + "; " + std::to_string(left) +
         " left in processed)";
}

} // namespace outbox::bench
