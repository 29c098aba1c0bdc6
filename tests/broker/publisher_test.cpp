#include "broker/publisher.hpp"

#include "broker/broker_error.hpp"
#include "tests/broker/event_entries.hpp"
#include "tests/broker/redis_fixture.hpp"

#include <gmock/gmock.h>
#include <nlohmann/json.hpp>

using namespace outbox::broker;
using outbox::test::redis_fixture;

namespace {

event_entry make_entry(const std::string& aggregate, std::int64_t seq) {
  return outbox::test::event_of(aggregate + "-" + std::to_string(seq),
                                aggregate, seq, "OrderPlaced",
                                R"({"sku":"A","qty":1})");
}

std::vector<std::string> event_ids(const std::vector<std::string>& values) {
  std::vector<std::string> ids;
  for (auto& v : values)
    ids.push_back(nlohmann::json::parse(v)["event_id"]);
  return ids;
}

/// Two aggregates that land in different partitions of `names`.
std::pair<std::string, std::string> split_pair(const keys& names) {
  std::string first = "order-0";
  for (int i = 1;; ++i) {
    auto other = "order-" + std::to_string(i);
    if (names.queue_for(other) != names.queue_for(first))
      return {first, other};
  }
}

using BrokerPublisher = redis_fixture;

} // namespace

TEST_F(BrokerPublisher, OneListKeepsBatchOrderInOneRpush) {
  keys names;
  publisher pub{conn(), names};
  std::vector<event_entry> batch;
  for (int seq = 1; seq <= 5; ++seq)
    batch.push_back(make_entry(seq % 2 ? "x" : "y", seq));
  pub.publish(batch);
  EXPECT_EQ(event_ids(list(names.queue)),
            (std::vector<std::string>{"x-1", "y-2", "x-3", "y-4", "x-5"}));
  // A second batch goes after the first.
  pub.publish({make_entry("x", 6)});
  EXPECT_EQ(list(names.queue).size(), 6u);
  EXPECT_EQ(event_ids(list(names.queue)).back(), "x-6");
}

TEST_F(BrokerPublisher, SeveralListsEachKeepOrder) {
  keys names;
  names.partitions = 4;
  publisher pub{conn(), names};
  auto [a, b] = split_pair(names);
  pub.publish({make_entry(a, 1), make_entry(b, 1), make_entry(a, 2),
               make_entry(b, 2), make_entry(a, 3)});
  EXPECT_EQ(event_ids(list(names.queue_for(a))),
            (std::vector<std::string>{a + "-1", a + "-2", a + "-3"}));
  EXPECT_EQ(event_ids(list(names.queue_for(b))),
            (std::vector<std::string>{b + "-1", b + "-2"}));
}

// MULTI/EXEC would push to the good list and fail only the RPUSH on the
// string key. The publish must leave every list untouched instead.
TEST_F(BrokerPublisher, SeveralListsAreAllOrNothing) {
  keys names;
  names.partitions = 4;
  publisher pub{conn(), names};
  auto [a, b] = split_pair(names);
  conn().command({"SET", names.queue_for(b), "not a list"});
  conn().command({"RPUSH", names.queue_for(a), "earlier"});
  try {
    pub.publish({make_entry(a, 1), make_entry(b, 1), make_entry(a, 2)});
    FAIL() << "publish succeeded";
  } catch (const broker_error& e) {
    EXPECT_EQ(e.code(), broker_errc::rejected);
    EXPECT_NE(std::string(e.what()).find(names.queue_for(b)), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(list(names.queue_for(a)), std::vector<std::string>{"earlier"});
  EXPECT_EQ(reply_text(*conn().command({"GET", names.queue_for(b)})),
            "not a list");
}

TEST_F(BrokerPublisher, OneListFailureWritesNothing) {
  keys names;
  publisher pub{conn(), names};
  conn().command({"SET", names.queue, "not a list"});
  EXPECT_THROW(pub.publish({make_entry("x", 1), make_entry("x", 2)}),
               broker_error);
  EXPECT_EQ(reply_text(*conn().command({"GET", names.queue})), "not a list");
}

TEST_F(BrokerPublisher, LargeMultiListBatch) {
  keys names;
  names.partitions = 3;
  publisher pub{conn(), names};
  std::vector<event_entry> batch;
  for (int seq = 1; seq <= 3000; ++seq)
    batch.push_back(make_entry("agg-" + std::to_string(seq % 7), seq));
  pub.publish(batch);
  std::size_t total = 0;
  for (std::size_t i = 0; i < names.partitions; ++i)
    total += list(names.partition(i)).size();
  EXPECT_EQ(total, 3000u);
  // Per aggregate, seq order is kept.
  auto values = list(names.queue_for("agg-3"));
  std::int64_t last = 0;
  for (auto& v : values) {
    auto j = nlohmann::json::parse(v);
    if (j["aggregate_id"] != "agg-3")
      continue;
    EXPECT_GT(j["seq"].get<std::int64_t>(), last);
    last = j["seq"];
  }
}

TEST_F(BrokerPublisher, PublishEncodedPushesInOrder) {
  publisher pub{conn(), keys{}};
  pub.publish_encoded("lab", {"one", "two", "three"});
  EXPECT_EQ(list("lab"), (std::vector<std::string>{"one", "two", "three"}));
}

TEST_F(BrokerPublisher, EntryOverMaxEntryBytesRefusesTheWholeBatch) {
  keys names;
  names.partitions = 4;
  names.max_entry_bytes = 1024;
  publisher pub{conn(), names};
  auto [first, other] = split_pair(names);
  auto big = make_entry(other, 1);
  big.payload = nlohmann::json{{"note", std::string(2000, 'x')}}.dump();
  std::vector<event_entry> batch{make_entry(first, 1), big};
  try {
    pub.publish(batch);
    FAIL() << "an oversized entry was published";
  } catch (const broker_error& e) {
    EXPECT_EQ(e.code(), broker_errc::rejected);
    EXPECT_EQ(e.reason(), refusal_reason::entry_too_large);
    std::string what = e.what();
    EXPECT_THAT(what, testing::HasSubstr(big.event_id));
    EXPECT_THAT(what, testing::HasSubstr("max_entry_bytes (1024)"));
    EXPECT_THAT(what, testing::HasSubstr(" bytes encoded"));
  }
  // All or nothing: the small entry of the batch was not pushed either.
  for (std::size_t p = 0; p < names.partitions; ++p)
    EXPECT_TRUE(list(names.partition(p)).empty()) << names.partition(p);
  // Alone, the small entry goes through.
  pub.publish({make_entry(first, 1)});
  EXPECT_EQ(list(names.queue_for(first)).size(), 1u);
  // The limit is inclusive: an entry of exactly max_entry_bytes is sent.
  names.max_entry_bytes = encode(big).size();
  publisher exact{conn(), names};
  exact.publish({big});
  EXPECT_EQ(list(names.queue_for(other)).size(), 1u);
}

TEST(BrokerPublisherLimit, OversizedEntryMakesNoRedisCall) {
  connection_options options;
  options.where.port = 1; // nothing listens: a call would be "unavailable"
  connection conn{options};
  keys names;
  names.max_entry_bytes = 1024;
  publisher pub{conn, names};
  auto e = outbox::test::event_of(
      "e-1", "a", 1, "OrderPaid",
      nlohmann::json{{"note", std::string(5000, 'y')}}.dump());
  try {
    pub.publish({e});
    FAIL() << "no error";
  } catch (const broker_error& err) {
    EXPECT_EQ(err.code(), broker_errc::rejected) << err.what();
  }
}

// Nothing to publish means no Redis call at all: the publisher below points
// at a port where nothing listens, and does not throw.
TEST(BrokerPublisherEmpty, EmptyInputMakesNoCall) {
  connection_options options;
  options.where.port = 1; // nothing listens on port 1
  connection conn{options};
  publisher pub{conn, keys{}};
  EXPECT_NO_THROW(pub.publish({}));
  EXPECT_NO_THROW(pub.publish_encoded("q", {}));
  EXPECT_THROW(pub.publish_encoded("q", {"x"}), broker_error);
}

TEST_F(BrokerPublisher, EveryPublishRingsItsListsDoorbellsKeepingOneToken) {
  keys names;
  names.partitions = 4;
  publisher pub{conn(), names};
  auto [a, b] = split_pair(names);
  pub.publish({make_entry(a, 1)});
  pub.publish({make_entry(a, 2)});
  EXPECT_EQ(list(names.doorbell_for(names.queue_for(a))).size(), 1u);
  EXPECT_TRUE(list(names.doorbell_for(names.queue_for(b))).empty());
  // Several lists in one publish (the script path) ring each of them.
  pub.publish({make_entry(a, 3), make_entry(b, 1)});
  EXPECT_EQ(list(names.doorbell_for(names.queue_for(a))).size(), 1u);
  EXPECT_EQ(list(names.doorbell_for(names.queue_for(b))).size(), 1u);
}

TEST_F(BrokerPublisher, ABrokenDoorbellDoesNotFailThePublish) {
  keys names;
  names.partitions = 4;
  publisher pub{conn(), names};
  auto [a, b] = split_pair(names);
  conn().command({"SET", names.doorbell_for(names.queue_for(a)), "x"});
  conn().command({"SET", names.doorbell_for(names.queue_for(b)), "x"});
  pub.publish({make_entry(a, 1)});
  pub.publish({make_entry(a, 2), make_entry(b, 1)});
  EXPECT_EQ(list(names.queue_for(a)).size(), 2u);
  EXPECT_EQ(list(names.queue_for(b)).size(), 1u);
}
