#include "storage/event_ids.hpp"

#include "storage/clock.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <set>
#include <string>
#include <thread>

using outbox::storage::event_id_source;
using outbox::storage::is_event_id;
using outbox::storage::wall_clock_now;

namespace {

/// The Unix time in ms a version 7 id carries in its first 48 bits.
std::int64_t time_of(const std::string& id) {
  return std::stoll(id.substr(0, 8) + id.substr(9, 4), nullptr, 16);
}

} // namespace

TEST(StorageEventIds, AnIdCarriesTheTimeItWasMadeAndVersionSeven) {
  event_id_source ids;
  auto before = wall_clock_now();
  auto id = ids.next();
  auto after = wall_clock_now();
  ASSERT_TRUE(is_event_id(id)) << id;
  EXPECT_EQ(id[14], '7') << id;
  EXPECT_NE(std::string{"89ab"}.find(id[19]), std::string::npos) << id;
  EXPECT_GE(time_of(id), before) << id;
  EXPECT_LE(time_of(id), after) << id;
}

// Later ids sort later (each lands at the right edge of the event_id
// index); within one ms they differ in their 74 random bits.
TEST(StorageEventIds, IdsOfLaterMillisecondsSortLater) {
  event_id_source ids;
  auto first = ids.next();
  auto ms = time_of(first);
  std::string later;
  do {
    std::this_thread::yield();
    later = ids.next();
  } while (time_of(later) == ms);
  EXPECT_LT(first, later);
  std::set<std::string> seen;
  for (int i = 0; i < 10000; ++i)
    EXPECT_TRUE(seen.insert(ids.next()).second);
}
