#include "broker/list_commands.hpp"

#include "tests/broker/redis_fixture.hpp"

#include <string>
#include <vector>

using namespace outbox::broker;
using outbox::test::redis_fixture;

namespace {

using BrokerListCommands = redis_fixture;

TEST_F(BrokerListCommands, PushedEntriesComeBackHeadFirstAndCounted) {
  EXPECT_EQ(whole_list(conn(), "l"), strings{});
  EXPECT_EQ(list_size(conn(), "l"), 0);
  push_to_list(conn(), "l", "first");
  push_to_list(conn(), "l", std::string{"bin\0ary", 7});
  EXPECT_EQ(whole_list(conn(), "l"),
            (strings{"first", std::string{"bin\0ary", 7}}));
  EXPECT_EQ(list_size(conn(), "l"), 2);
}

TEST_F(BrokerListCommands, DeleteKeysCountsTheOnesThatExisted) {
  push_to_list(conn(), "a", "x");
  conn().command({"SET", "b", "y"});
  EXPECT_EQ(delete_keys(conn(), {"a", "b", "never"}), 2);
  EXPECT_EQ(list_size(conn(), "a"), 0);
  EXPECT_EQ(delete_keys(conn(), {"a"}), 0);
}

} // namespace
