#include "audit/trim_rule.hpp"

#include "storage/lease_policy.hpp"

namespace outbox::audit {

trim_verdict judge_for_trim(const storage::publication& row,
                            std::int64_t cutoff) {
  using state = storage::publication::state;
  if (row.where == state::purged ||
      (row.where == state::present && row.status == "PUBLISHED" &&
       row.published_at < cutoff))
    return trim_verdict::delivered;
  if (row.where == state::present)
    return trim_verdict::unpublished;
  return trim_verdict::unknown;
}

std::int64_t redelivery_window(const storage::lease_policy& lease) {
  return lease.ttl * lease.max_attempts;
}

} // namespace outbox::audit
