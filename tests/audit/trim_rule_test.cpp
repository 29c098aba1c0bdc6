#include "audit/trim_rule.hpp"

#include "storage/lease_policy.hpp"

#include <gtest/gtest.h>

using namespace outbox;
using audit::judge_for_trim;
using audit::trim_verdict;
using state = storage::publication::state;

namespace {

storage::publication row(state where, const std::string& status = "",
                         std::int64_t published_at = 0) {
  storage::publication p;
  p.where = where;
  p.status = status;
  p.published_at = published_at;
  return p;
}

} // namespace

TEST(AuditTrimRule, APurgedRowWasDeliveredWhateverTheCutoff) {
  EXPECT_EQ(trim_verdict::delivered, judge_for_trim(row(state::purged), 0));
}

TEST(AuditTrimRule, ARowPublishedBeforeTheCutoffWasDelivered) {
  EXPECT_EQ(trim_verdict::delivered,
            judge_for_trim(row(state::present, "PUBLISHED", 999), 1000));
}

TEST(AuditTrimRule, ARowPublishedAtOrAfterTheCutoffIsKept) {
  // The same strict comparison as verify's published_processed check.
  EXPECT_EQ(trim_verdict::unpublished,
            judge_for_trim(row(state::present, "PUBLISHED", 1000), 1000));
  EXPECT_EQ(trim_verdict::unpublished,
            judge_for_trim(row(state::present, "PUBLISHED", 1001), 1000));
}

TEST(AuditTrimRule, ARowNotPublishedIsKeptHoweverOld) {
  // A FAILED row may be retried and delivered again.
  for (const auto* status : {"PENDING", "SENDING", "FAILED"})
    EXPECT_EQ(trim_verdict::unpublished,
              judge_for_trim(row(state::present, status, 0), 1000))
        << status;
}

TEST(AuditTrimRule, AnEventWithNoRowAndNoPurgeIsUnknown) {
  EXPECT_EQ(trim_verdict::unknown, judge_for_trim(row(state::unknown), 1000));
}

TEST(AuditTrimRule, TheRedeliveryWindowOutlastsEveryLeaseARowCanGoThrough) {
  storage::lease_policy lease;
  lease.ttl = 10'000;
  lease.max_attempts = 8;
  EXPECT_EQ(80'000, lease.redelivery_window());
}
