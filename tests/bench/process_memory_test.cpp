#include "bench/process_memory.hpp"

#include <gtest/gtest.h>

#include <sys/mman.h>

#include <cstring>

using namespace outbox::bench;

// The peak follows memory touched since the last reset, and a reset
// forgets a peak whose memory was given back. The block is mapped and
// unmapped directly: an allocator may keep freed memory (ASan's quarantine
// does), and then nothing would be given back.
TEST(BenchProcessMemory, APeakCoversWhatWasTouchedSinceTheReset) {
  if (!reset_peak_resident())
    GTEST_SKIP() << "this kernel refuses /proc/self/clear_refs: no peak to "
                    "reset, so the bench reports no memory section";
  auto before = peak_resident_mib();
  ASSERT_TRUE(before);
  constexpr std::size_t size = std::size_t{64} << 20;
  void* block = mmap(nullptr, size, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(block, MAP_FAILED);
  std::memset(block, 1, size); // resident, not only reserved
  auto during = peak_resident_mib();
  ASSERT_TRUE(during);
  EXPECT_GE(*during, *before + 60) << "64 MiB touched";
  ASSERT_EQ(munmap(block, size), 0);
  ASSERT_TRUE(reset_peak_resident());
  auto after = peak_resident_mib();
  ASSERT_TRUE(after);
  EXPECT_LT(*after, *before + 30);
}
