#include "cli/duration.hpp"

#include <gtest/gtest.h>

namespace outbox::cli {
namespace {

TEST(CliDuration, ParsesEveryUnit) {
  EXPECT_EQ(parse_duration("500ms"), 500);
  EXPECT_EQ(parse_duration("30s"), 30'000);
  EXPECT_EQ(parse_duration("15m"), 15 * 60'000);
  EXPECT_EQ(parse_duration("12h"), 12 * 3'600'000LL);
  EXPECT_EQ(parse_duration("7d"), 7 * 86'400'000LL);
  EXPECT_EQ(parse_duration("0s"), 0);
}

TEST(CliDuration, RefusesAnythingElse) {
  for (const char* text : {"", "7", "d", "7 d", "-1s", "1.5h", "7days", "1w",
                           "9999999999999999s", "999999999999999d"})
    EXPECT_FALSE(parse_duration(text).has_value()) << text;
}

TEST(CliDuration, FormatsWithTheLargestExactUnit) {
  EXPECT_EQ(format_duration(80'000), "80s");
  EXPECT_EQ(format_duration(7 * 86'400'000LL), "7d");
  EXPECT_EQ(format_duration(1'500), "1500ms");
  EXPECT_EQ(format_duration(0), "0ms");
}

TEST(CliDuration, FormatsMomentsInUtc) {
  EXPECT_EQ(format_utc(0), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(format_utc(1'795'996'710'331), "2026-11-29T23:58:30.331Z");
  EXPECT_EQ(format_utc(-5), "-5 ms");
}

} // namespace
} // namespace outbox::cli
