#include "broker/broker_error.hpp"

#include <gtest/gtest.h>

namespace outbox::broker {
namespace {

// The words as Redis 7 and Redis 6 send them (the cases of a real Redis
// are in connection_test.cpp and publisher_test.cpp).
TEST(BrokerRefusalReason, WrongTypeIsToldWhereverTheReplyHoldsIt) {
  EXPECT_EQ(
      refusal_reason_of("WRONGTYPE Operation against a key holding the wrong "
                        "kind of value"),
      refusal_reason::wrong_type);
  EXPECT_EQ(
      refusal_reason_of("WRONGTYPE key q holds a string, expected a list"),
      refusal_reason::wrong_type);
  EXPECT_EQ(
      refusal_reason_of("ERR Error running script (call to f_0): "
                        "@user_script:3: WRONGTYPE Operation against a key"),
      refusal_reason::wrong_type);
}

TEST(BrokerRefusalReason, ARefusedCommandIsNoRowsFault) {
  EXPECT_EQ(refusal_reason_of("NOPERM this user has no permissions to run the "
                              "'rpush' command"),
            refusal_reason::command_refused);
  EXPECT_EQ(
      refusal_reason_of("ERR unknown command 'EVALSHA', with args beginning "
                        "with: "),
      refusal_reason::command_refused);
  // Redis 7.2 names the key a user may not touch: a key named so is still
  // the ACL's refusal, not a wrong type.
  EXPECT_EQ(refusal_reason_of("NOPERM No permissions to access a key: "
                              "WRONGTYPE.queue"),
            refusal_reason::command_refused);
}

TEST(BrokerRefusalReason, AnyOtherReplyIsOther) {
  EXPECT_EQ(refusal_reason_of("ERR Error running script: attempt to index nil"),
            refusal_reason::other);
  EXPECT_EQ(refusal_reason_of(""), refusal_reason::other);
  broker_error plain{broker_errc::rejected, "Redis rejected a command"};
  EXPECT_EQ(plain.reason(), refusal_reason::other);
}

} // namespace
} // namespace outbox::broker
