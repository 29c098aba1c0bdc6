#include "startup/verdict.hpp"

#include "broker/broker_error.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

// A check that threw keeps what it had said (keeping_remarks): the error
// goes on as the same error to whoever catches its type, carrying the
// remarks, and a check that said nothing, or did not throw, is unchanged.

namespace outbox::test {
namespace {

using startup::gathered_remarks;
using startup::remark;
using startup::verdict;

TEST(StartupKeptRemarks, AThrowAfterARemarkCarriesTheRemarksInTheSameError) {
  try {
    startup::keeping_remarks<broker::broker_error>([](verdict& judged) {
      judged.inform("merged 3 skus");
      judged.warn("cannot read maxmemory-policy");
      throw broker::broker_error(broker::broker_errc::unavailable,
                                 "Redis at 127.0.0.1:1 is unavailable");
    });
    ADD_FAILURE() << "no throw";
  } catch (const broker::broker_error& e) {
    EXPECT_EQ(e.code(), broker::broker_errc::unavailable);
    EXPECT_STREQ(e.what(), "Redis at 127.0.0.1:1 is unavailable");
    const auto* gathered = dynamic_cast<const gathered_remarks*>(&e);
    ASSERT_NE(gathered, nullptr) << "the remarks were lost";
    ASSERT_EQ(gathered->remarks().size(), 2u);
    EXPECT_EQ(gathered->remarks()[0].said_as, remark::level::info);
    EXPECT_EQ(gathered->remarks()[0].text, "merged 3 skus");
    EXPECT_EQ(gathered->remarks()[1].said_as, remark::level::warning);
    EXPECT_EQ(gathered->remarks()[1].text, "cannot read maxmemory-policy");
  }
}

TEST(StartupKeptRemarks, AThrowBeforeAnyRemarkGoesOnAsItWas) {
  try {
    startup::keeping_remarks<broker::broker_error>([](verdict&) {
      throw broker::broker_error(broker::broker_errc::unavailable, "down");
    });
    ADD_FAILURE() << "no throw";
  } catch (const broker::broker_error& e) {
    EXPECT_STREQ(e.what(), "down");
    EXPECT_EQ(dynamic_cast<const gathered_remarks*>(&e), nullptr);
  }
}

TEST(StartupKeptRemarks, AnotherErrorIsNotCaught) {
  EXPECT_THROW(startup::keeping_remarks<broker::broker_error>([](verdict& v) {
                 v.inform("said");
                 throw std::logic_error("a bug");
               }),
               std::logic_error);
}

TEST(StartupKeptRemarks, ACheckThatEndsReturnsItsVerdict) {
  auto judged = startup::keeping_remarks<broker::broker_error>([](verdict& v) {
    v.debug("looked");
    v.refuse(startup::outcome::refused_usage, "no");
  });
  EXPECT_TRUE(judged.refused());
  EXPECT_EQ(judged.refusal, "no");
  ASSERT_EQ(judged.remarks.size(), 1u);
  EXPECT_EQ(judged.remarks[0].text, "looked");
}

} // namespace
} // namespace outbox::test
