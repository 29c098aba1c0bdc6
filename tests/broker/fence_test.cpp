#include "broker/fence.hpp"

#include "broker/lua_files.hpp"

#include <gtest/gtest.h>

#include <string>

// The refusal's prefix is spelled twice: in broker/lua/fence_refusal.lua,
// which Redis runs and a user may read or copy verbatim (so it is not
// templated), and in fenced_error_prefix, which throw_if_error matches to
// throw broker_error(fenced). The fenced calls of consumer_lock_test show
// it end to end on a real Redis; this test names the two spellings.

namespace outbox::test {
namespace {

TEST(BrokerFence, TheLuaRefusalStartsWithThePrefixTheConnectionMatches) {
  const std::string lua{broker::lua_files::fence_refusal};
  const std::string reply =
      std::string{"redis.error_reply('"} + broker::fenced_error_prefix + " ";
  auto at = lua.find(reply);
  ASSERT_NE(at, std::string::npos)
      << "fence_refusal.lua no longer refuses with '"
      << broker::fenced_error_prefix << " ...':\n"
      << lua;
  // Every refusal it makes carries the prefix: it has one error reply.
  EXPECT_EQ(lua.find("error_reply", at + reply.size()), std::string::npos)
      << lua;
}

TEST(BrokerFence, AFenceWithoutAHolderChecksNothing) {
  EXPECT_FALSE((broker::fence{"outbox:consumers:lock", ""}.active()));
  EXPECT_TRUE((broker::fence{"outbox:consumers:lock", "p1#1"}.active()));
}

} // namespace
} // namespace outbox::test
