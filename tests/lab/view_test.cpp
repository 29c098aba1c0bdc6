#include "lab/view.hpp"

#include "broker/entry.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace outbox::lab {
namespace {

std::string entry(const std::string& id, const std::string& aggregate,
                  std::int64_t seq) {
  return broker::encode({id, aggregate, seq, "T", "{}", 0, 0});
}

TEST(LabOrderCheck, AcceptsInterleavedAggregatesInSeqOrder) {
  auto verdict = check_queue_order({entry("a1", "a", 1), entry("b1", "b", 1),
                                    entry("a2", "a", 2), entry("b2", "b", 2)});
  EXPECT_TRUE(verdict.ok());
  EXPECT_EQ(verdict.aggregates, 2u);
  EXPECT_EQ(verdict.entries, 4u);
}

TEST(LabOrderCheck, IgnoresRedeliveriesButNotFirstDeliveriesOutOfOrder) {
  // a1 again after a2: an at-least-once duplicate, not a reordering.
  EXPECT_TRUE(check_queue_order({entry("a1", "a", 1), entry("a2", "a", 2),
                                 entry("a1", "a", 1)})
                  .ok());
  auto verdict = check_queue_order({entry("a2", "a", 2), entry("a1", "a", 1)});
  ASSERT_EQ(verdict.problems.size(), 1u);
  EXPECT_THAT(verdict.problems[0], testing::HasSubstr("aggregate a: seq 1"));
}

TEST(LabOrderCheck, MalformedEntriesAreProblems) {
  EXPECT_FALSE(check_queue_order({"not json"}).ok());
}

TEST(LabReport, FourLinesAndDuplicateCount) {
  EXPECT_EQ(report_text({5, 8, 9, 8}),
            "orders=5\noutbox=8\nenqueued=9\nprocessed_unique=8\n");
  EXPECT_EQ(
      count_event({entry("x", "a", 1), entry("y", "a", 2), entry("x", "a", 1)},
                  "x"),
      2);
  queue_progress q;
  q.queued = 1;
  q.in_processing = 2;
  q.consumed = 3;
  q.duplicates = 4;
  q.dead_lettered = 5;
  EXPECT_EQ(q.enqueued(), 15);
}

} // namespace
} // namespace outbox::lab
