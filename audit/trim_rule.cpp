#include "audit/trim_rule.hpp"

#include "storage/database.hpp"
#include "storage/types.hpp"

namespace outbox::audit {

trim_verdict judge_for_trim(const storage::publication& row,
                            std::int64_t cutoff) {
  using state = storage::publication::state;
  if (row.where == state::purged ||
      (row.where == state::present &&
       storage::row_status_of(row.status) == storage::row_status::published &&
       row.published_at < cutoff))
    return trim_verdict::delivered;
  if (row.where == state::present)
    return trim_verdict::unpublished;
  return trim_verdict::unknown;
}

std::vector<storage::applied_event> delivered_for_trim(
    storage::database& db, std::vector<storage::applied_event> events,
    std::int64_t cutoff, std::int64_t& unpublished, std::int64_t& unknown) {
  auto rows = db.read_publications(events);
  std::vector<storage::applied_event> delivered;
  for (std::size_t i = 0; i < events.size(); ++i) {
    switch (judge_for_trim(rows[i], cutoff)) {
    case trim_verdict::delivered:
      delivered.push_back(std::move(events[i]));
      break;
    case trim_verdict::unpublished:
      ++unpublished;
      break;
    case trim_verdict::unknown:
      ++unknown;
      break;
    }
  }
  return delivered;
}

} // namespace outbox::audit
