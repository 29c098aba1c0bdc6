#include "bench/process_memory.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>

using namespace outbox::bench;

// The peak follows memory touched since the last reset, and a reset
// forgets a peak whose memory was given back.
TEST(BenchProcessMemory, APeakCoversWhatWasTouchedSinceTheReset) {
  if (!reset_peak_resident())
    GTEST_SKIP() << "this kernel refuses /proc/self/clear_refs: no peak to "
                    "reset, so the bench reports no memory section";
  auto before = peak_resident_mib();
  ASSERT_TRUE(before);
  {
    constexpr std::size_t mib = 64;
    auto block = std::make_unique<char[]>(mib << 20);
    std::memset(block.get(), 1, mib << 20); // resident, not only reserved
    auto during = peak_resident_mib();
    ASSERT_TRUE(during);
    EXPECT_GE(*during, *before + 60) << "64 MiB touched";
  }
  // Freed (a block that large goes back to the kernel with munmap).
  ASSERT_TRUE(reset_peak_resident());
  auto after = peak_resident_mib();
  ASSERT_TRUE(after);
  EXPECT_LT(*after, *before + 30);
}
