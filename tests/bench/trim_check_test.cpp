#include "bench/trim_check.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace outbox::bench {
namespace {

broker::trim_totals all_of(std::int64_t records) {
  broker::trim_totals t;
  t.scanned = records;
  t.trimmed = records;
  t.batches = 1;
  return t;
}

TEST(BenchTrimCheck, OnlyATrimOfEveryRecordPasses) {
  EXPECT_EQ(trim_shortfall(all_of(100), 100, 0), "");

  auto short_one = all_of(100);
  short_one.trimmed = 99;
  short_one.kept_queued = 1;
  EXPECT_THAT(trim_shortfall(short_one, 100, 1),
              testing::HasSubstr("trim forgot 99 of 100"));
  EXPECT_THAT(trim_shortfall(short_one, 100, 1),
              testing::HasSubstr("queued 1"));
  // Counted as trimmed, yet still there; or more scanned than written.
  EXPECT_THAT(trim_shortfall(all_of(100), 100, 3),
              testing::HasSubstr("3 left in processed"));
  auto twice = all_of(100);
  twice.scanned = 101;
  EXPECT_THAT(trim_shortfall(twice, 100, 0), testing::HasSubstr("scanned 101"));
  EXPECT_NE(trim_shortfall(all_of(99), 100, 0), "");
}

} // namespace
} // namespace outbox::bench
