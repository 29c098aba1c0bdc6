#include "broker/recovery_lists.hpp"

#include "tests/broker/redis_fixture.hpp"

#include <string>
#include <utility>
#include <vector>

using namespace outbox::broker;
using outbox::test::redis_fixture;

namespace {

using BrokerRecoveryLists = redis_fixture;

TEST_F(BrokerRecoveryLists, OnlyListsOfConfiguredQueuesAreRecoverable) {
  keys names;
  names.partitions = 2;
  conn().command({"RPUSH", "outbox.processing.outbox.events.0/c1", "a"});
  conn().command({"RPUSH", "outbox.processing.outbox.events.1/c2", "b"});
  // Foreign: named after another key, a partition that is not configured,
  // no consumer part, and a key of another type with a good name.
  conn().command({"RPUSH", "outbox.processing.processed/x", "junk"});
  conn().command({"RPUSH", "outbox.processing.outbox.events.7/c3", "c"});
  conn().command({"RPUSH", "outbox.processing.loose", "d"});
  conn().command({"HSET", "outbox.processing.outbox.events.0/c4", "f", "v"});
  auto found = find_recovery_lists(conn(), names);
  using pair = std::pair<std::string, std::string>;
  EXPECT_EQ(found.lists,
            (std::vector<pair>{
                {"outbox.processing.outbox.events.0/c1", "outbox.events.0"},
                {"outbox.processing.outbox.events.1/c2", "outbox.events.1"}}));
  EXPECT_EQ(found.foreign, (strings{"outbox.processing.loose",
                                    "outbox.processing.outbox.events.0/c4",
                                    "outbox.processing.outbox.events.7/c3",
                                    "outbox.processing.processed/x"}));
}

TEST_F(BrokerRecoveryLists, RecoverEveryListPutsEntriesBackAtTheHead) {
  keys names;
  names.partitions = 1;
  conn().command({"RPUSH", names.queue, "later"});
  conn().command(
      {"RPUSH", names.processing_for(names.queue, "c1"), "first", "second"});
  conn().command({"RPUSH", "outbox.processing.loose", "foreign"});
  EXPECT_EQ(recover_every_list(conn(), names), 2u);
  EXPECT_EQ(list(names.queue), (strings{"first", "second", "later"}));
  EXPECT_EQ(list("outbox.processing.loose"), strings{"foreign"});
}

} // namespace
