#include "actors/coordinator.hpp"
#include "actors/relay_process.hpp"
#include "cli/common_options.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <string>

namespace outbox::cli {
namespace {

TEST(CliProcessName, HoldsTheHostThePidAndTheStart) {
  char host[256] = "";
  ::gethostname(host, sizeof host - 1);
  auto name = process_name();
  auto head = std::string{host} + "-" + std::to_string(::getpid()) + ".";
  ASSERT_EQ(name.rfind(head, 0), 0u) << name;
  // Start time in base 36 (8 digits until the year 2059) and 4 hex digits.
  EXPECT_THAT(name.substr(head.size()), testing::MatchesRegex("[0-9a-z]{12}"))
      << name;
  EXPECT_EQ(process_name(), name) << "one name for the whole process";
  // `outbox status` still reads a relay of this process as running.
  EXPECT_EQ(actors::relay_process_state(actors::worker_name(
                name, actors::worker_slot::role::relay, 0, 0)),
            "");
}

} // namespace
} // namespace outbox::cli
