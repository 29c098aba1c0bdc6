#include "actors/progress_line.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

// The progress line is redrawn in place with `\r`: one character too many
// and the terminal wraps it, leaving a copy behind at every refresh. Every
// width gets a line that fits, with what matters most kept longest.

using namespace outbox;

namespace {

actors::run_progress busy_run() {
  actors::run_progress p;
  p.elapsed_ms = 12'345;
  p.done_label = "orders";
  p.done = 1083;
  p.target = 2000;
  p.events_per_s = 845.4;
  p.state.pending = 1200;
  p.state.sending = 256;
  p.state.published = 2400;
  p.state.failed = 0;
  p.state.queued = 30;
  p.state.in_processing = 4;
  p.state.processed = 2380;
  p.state.duplicates = 3;
  p.relay_restarts = 1;
  return p;
}

std::size_t columns(const std::string& line) {
  std::size_t n = 0;
  for (unsigned char c : line)
    if ((c & 0xC0) != 0x80)
      ++n;
  return n;
}

TEST(ActorProgressLine, FitsEveryWidthBelowItsLastColumn) {
  auto p = busy_run();
  for (std::size_t width : {2u, 10u, 20u, 40u, 60u, 80u, 100u, 120u, 200u}) {
    auto line = actors::progress_text(p, width);
    EXPECT_LE(columns(line), width - 1) << width << ": " << line;
    EXPECT_FALSE(line.empty() && width > 1) << width;
  }
  p.waiting = "waiting for 256 leases of a dead relay, expire in 7 s; the run "
              "ends in 12 s if nothing moves";
  for (std::size_t width : {20u, 40u, 80u, 120u})
    EXPECT_LE(columns(actors::progress_text(p, width)), width - 1) << width;
}

TEST(ActorProgressLine, KeepsElapsedDoneAndRateAt80Columns) {
  auto line = actors::progress_text(busy_run(), 80);
  EXPECT_EQ(line.rfind("12.3 s | orders 1083/2000 | 845 events/s", 0), 0u)
      << line;
}

TEST(ActorProgressLine, TheFullFormHasEveryCountWhenThereIsRoom) {
  auto line = actors::progress_text(busy_run(), 0);
  for (const char* part :
       {"12.3 s", "orders 1083/2000", "845 events/s", "pending 1200",
        "sending 256", "published 2400", "failed 0", "processed 2380", "dup 3",
        "restarts relay 1 consumer 0"})
    EXPECT_THAT(line, testing::HasSubstr(part)) << part << " in " << line;
  EXPECT_EQ(actors::progress_text(busy_run(), 200), line);
}

TEST(ActorProgressLine, WhyNothingMovesOutranksTheCounts) {
  auto p = busy_run();
  p.waiting = "waiting for 256 leases of a dead relay, expire in 7 s";
  auto line = actors::progress_text(p, 80);
  EXPECT_THAT(line, testing::HasSubstr(p.waiting));
  EXPECT_EQ(line.rfind("12.3 s |", 0), 0u) << line;
  // Too narrow for all of it: cut, marked, still starting with the time.
  auto narrow = actors::progress_text(p, 40);
  EXPECT_EQ(narrow.rfind("12.3 s | waiting for 256", 0), 0u) << narrow;
  EXPECT_EQ(narrow.substr(narrow.size() - 3), "...") << narrow;
}

TEST(ActorProgressLine, StoreTroubleIsShownEscaped) {
  auto p = busy_run();
  p.state.trouble = "redis: \x1b[2Jgone";
  auto line = actors::progress_text(p, 120);
  EXPECT_EQ(line.find('\x1b'), std::string::npos) << line;
  EXPECT_THAT(line, testing::HasSubstr("redis: \\e[2Jgone"));
}

TEST(ActorProgressLine, ElapsedTimeReadsAsAPersonSaysIt) {
  EXPECT_EQ(actors::elapsed_text(8'240), "8.2 s");
  EXPECT_EQ(actors::elapsed_text(187'000), "3m07s");
  EXPECT_EQ(actors::elapsed_text(3'720'000), "1h02m");
}

} // namespace
