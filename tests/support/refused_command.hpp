#pragma once

// A command line the tool must refuse, for the table-driven tests of its
// usage errors: each names what it got wrong, with exit code 2.

#include "support/process.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace outbox::test {

/// Arguments the tool must refuse, and words its stderr must hold.
struct refused_command {
  std::vector<std::string> args;
  std::string says;
};

/// Expects `r`, what the tool did with `c.args`, to be its refusal: exit
/// code 2, and `c.says` in stderr.
inline void expect_refused(const refused_command& c, const process_result& r) {
  EXPECT_EQ(r.exit_code, 2) << c.says << ": " << r.err;
  EXPECT_THAT(r.err, testing::HasSubstr(c.says));
}

} // namespace outbox::test
