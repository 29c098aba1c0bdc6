#include "broker/queued_events.hpp"

#include "broker/connection.hpp"
#include "broker/entry.hpp"
#include "broker/keys.hpp"
#include "tests/broker/event_entries.hpp"
#include "tests/broker/redis_fixture.hpp"

#include <gmock/gmock.h>
#include <string>
#include <unordered_set>

using namespace outbox::broker;
using outbox::test::redis_fixture;

namespace {

std::string entry(const std::string& event_id) {
  return outbox::test::encoded_event(event_id, "order-1", 1, "OrderPaid", "{}");
}

/// Which of the events a trim may drop still have a copy in a list.
class BrokerQueuedEvents : public redis_fixture {
protected:
  void push(const std::string& list, int from, int to) {
    for (int i = from; i < to; ++i)
      conn().command({"RPUSH", list, entry("e" + std::to_string(i))});
  }

  keys names_ = [] {
    keys k;
    k.partitions = 2;
    return k;
  }();
};

} // namespace

TEST_F(BrokerQueuedEvents, FindsWantedEventsInEveryPageOfEveryList) {
  // Ten entries per queue read three at a time: the head, a middle page
  // and the short last page must all be read.
  push(names_.partition(0), 0, 10);
  push(names_.partition(1), 10, 20);
  push(names_.processing_for(names_.partition(0), "c-1"), 20, 22);
  conn().command({"RPUSH", names_.partition(1), "not an entry"});
  auto found =
      queued_among(conn(), names_, {"e0", "e5", "e9", "e10", "e21", "e99"}, 3);
  EXPECT_EQ(found,
            (std::unordered_set<std::string>{"e0", "e5", "e9", "e10", "e21"}));
}

TEST_F(BrokerQueuedEvents, ReadsNoListForNothingWanted) {
  push(names_.partition(0), 0, 10);
  conn().command({"CONFIG", "RESETSTAT"});
  EXPECT_TRUE(queued_among(conn(), names_, {}, 3).empty());
  auto stats = reply_text(*conn().command({"INFO", "commandstats"}));
  EXPECT_THAT(stats, testing::Not(testing::HasSubstr("cmdstat_lrange")));
  EXPECT_THAT(stats, testing::Not(testing::HasSubstr("cmdstat_scan")));
}

TEST_F(BrokerQueuedEvents, ALengthThatIsAMultipleOfThePageEndsTheRead) {
  push(names_.partition(0), 0, 6);
  auto found = queued_among(conn(), names_, {"e0", "e3"}, 3);
  EXPECT_EQ(found, (std::unordered_set<std::string>{"e0", "e3"}));
}

TEST_F(BrokerQueuedEvents, FindsEntriesOnlyParsingTellsTheIdOf) {
  // An escape in the payload, and an event_id written twice: their ids are
  // what decode() reads, as the consumer's script would.
  auto escaped = outbox::test::encoded_event("e30", "order-1", 1, "OrderPaid",
                                             R"({"note":"a \"b\""})");
  std::string twice = R"({"v":1,"event_id":"e40","aggregate_id":"order-1",)"
                      R"("seq":2,"event_type":"OrderPaid","payload":{},)"
                      R"("event_id":"e41"})";
  auto decoded = decode(twice);
  ASSERT_TRUE(std::holds_alternative<event_entry>(decoded));
  auto second = std::get<event_entry>(decoded).event_id;
  conn().command({"RPUSH", names_.partition(0), escaped});
  conn().command({"RPUSH", names_.partition(1), twice});
  auto found = queued_among(conn(), names_, {"e30", second, "e99"}, 3);
  EXPECT_EQ(found, (std::unordered_set<std::string>{"e30", second}));
}
