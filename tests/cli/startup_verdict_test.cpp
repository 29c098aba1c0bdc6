#include "cli/startup_verdict.hpp"

#include "broker/broker_error.hpp"
#include "cli/exit_codes.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

// tell_check tells a check's verdict as tell_verdict does, and the remarks
// of a check that threw before the error goes on (a warning said on
// stderr is not lost with the start).

namespace outbox::test {
namespace {

using startup::verdict;
using testing::HasSubstr;

TEST(CliStartupVerdict, AThrowingCheckHasItsWarningsToldThenItsErrorGoesOn) {
  testing::internal::CaptureStderr();
  bool caught = false;
  try {
    cli::tell_check(
        [] {
          return startup::keeping_remarks<broker::broker_error>(
              [](verdict& judged) {
                judged.warn("cannot merge an older outbox's reservation");
                throw broker::broker_error(broker::broker_errc::unavailable,
                                           "Redis lost");
              });
        },
        "outbox run");
  } catch (const broker::broker_error& e) {
    caught = true;
    EXPECT_STREQ(e.what(), "Redis lost");
  }
  auto err = testing::internal::GetCapturedStderr();
  EXPECT_TRUE(caught);
  EXPECT_THAT(err, HasSubstr("outbox run: warning: cannot merge an older "
                             "outbox's reservation"));
}

TEST(CliStartupVerdict, ACheckThatEndsIsToldAsItsVerdict) {
  testing::internal::CaptureStderr();
  auto stop = cli::tell_check(
      [] {
        verdict judged;
        judged.warn("no persistence");
        judged.refuse(startup::outcome::refused_usage, "another keyspace");
        return judged;
      },
      "outbox run");
  auto err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(stop, cli::exit_usage);
  EXPECT_THAT(err, HasSubstr("outbox run: warning: no persistence"));
  EXPECT_THAT(err, HasSubstr("outbox run: another keyspace"));
}

} // namespace
} // namespace outbox::test
