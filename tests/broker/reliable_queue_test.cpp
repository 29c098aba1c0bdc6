#include "broker/reliable_queue.hpp"

#include "broker/broker_error.hpp"
#include "redis_fixture.hpp"

#include <chrono>

using namespace outbox::broker;
using outbox::test::redis_fixture;

namespace {

using BrokerQueue = redis_fixture;
using strings = std::vector<std::string>;

} // namespace

TEST_F(BrokerQueue, PopMovesHeadToProcessingAndRemoveDeletesIt) {
  reliable_queue queue{conn()};
  conn().command({"RPUSH", "q", "a", "b"});
  auto first = queue.pop("q", "p", 0);
  ASSERT_TRUE(first);
  EXPECT_EQ(*first, "a");
  EXPECT_EQ(list("q"), strings{"b"});
  EXPECT_EQ(list("p"), strings{"a"});
  auto second = queue.pop("q", "p", 100);
  ASSERT_TRUE(second);
  EXPECT_EQ(*second, "b");
  EXPECT_EQ(list("p"), (strings{"a", "b"}));
  queue.remove("p", "a");
  EXPECT_EQ(list("p"), strings{"b"});
  queue.remove("p", "b");
  EXPECT_TRUE(list("p").empty());
  // Removing what is no longer there is harmless.
  EXPECT_NO_THROW(queue.remove("p", "b"));
}

TEST_F(BrokerQueue, RemoveTakesOneCopyOnly) {
  reliable_queue queue{conn()};
  conn().command({"RPUSH", "p", "same", "other", "same"});
  queue.remove("p", "same");
  EXPECT_EQ(list("p"), (strings{"other", "same"}));
}

TEST_F(BrokerQueue, PopWithoutWaitReturnsAtOnce) {
  reliable_queue queue{conn()};
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(queue.pop("q", "p", 0));
  EXPECT_LT(std::chrono::steady_clock::now() - start,
            std::chrono::milliseconds(500));
}

TEST_F(BrokerQueue, PopWaitsUpToItsTimeout) {
  reliable_queue queue{conn()};
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(queue.pop("q", "p", 200));
  auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_GE(waited, std::chrono::milliseconds(150));
  EXPECT_LT(waited, std::chrono::milliseconds(2000));
}

TEST_F(BrokerQueue, PopBatchTakesOldestFirstUpToMax) {
  reliable_queue queue{conn()};
  conn().command({"RPUSH", "q", "a", "b", "c", "d", "e"});
  EXPECT_EQ(queue.pop_batch("q", "p", 3), (strings{"a", "b", "c"}));
  EXPECT_EQ(list("p"), (strings{"a", "b", "c"}));
  EXPECT_EQ(queue.pop_batch("q", "p", 10), (strings{"d", "e"}));
  EXPECT_EQ(list("p"), (strings{"a", "b", "c", "d", "e"}));
  EXPECT_TRUE(queue.pop_batch("q", "p", 10).empty());
  EXPECT_TRUE(queue.pop_batch("q", "p", 0).empty());
}

TEST_F(BrokerQueue, PopOnWrongTypeIsRejected) {
  reliable_queue queue{conn()};
  conn().command({"SET", "q", "x"});
  conn().command({"RPUSH", "q2", "a"});
  EXPECT_THROW(queue.pop("q", "p", 0), broker_error);
  EXPECT_THROW(queue.pop_batch("q", "p", 2), broker_error);
}

TEST_F(BrokerQueue, RecoverPutsInFlightEntriesBackAtTheHeadInOrder) {
  reliable_queue queue{conn()};
  conn().command({"RPUSH", "q", "a", "b", "c", "d"});
  queue.pop("q", "p", 0);
  queue.pop("q", "p", 0);
  ASSERT_EQ(list("q"), (strings{"c", "d"}));
  ASSERT_EQ(list("p"), (strings{"a", "b"}));
  EXPECT_EQ(queue.recover("p", "q"), 2u);
  EXPECT_EQ(list("q"), (strings{"a", "b", "c", "d"}));
  EXPECT_TRUE(list("p").empty());
  EXPECT_EQ(queue.recover("p", "q"), 0u);
  EXPECT_THROW(queue.recover("q", "q"), std::invalid_argument);
}

TEST_F(BrokerQueue, RecoverSurvivesScriptFlush) {
  reliable_queue queue{conn()};
  conn().command({"RPUSH", "p", "a"});
  EXPECT_EQ(queue.recover("p", "q"), 1u);
  conn().command({"SCRIPT", "FLUSH"});
  conn().command({"RPUSH", "p", "b"});
  EXPECT_EQ(queue.recover("p", "q"), 1u);
  EXPECT_EQ(list("q"), (strings{"b", "a"}));
}

TEST_F(BrokerQueue, ProcessingListsFindsListsUnderThePrefix) {
  reliable_queue queue{conn()};
  conn().command({"RPUSH", "outbox.processing.c1", "x"});
  conn().command({"RPUSH", "outbox.processing.c2", "y"});
  conn().command({"SET", "outbox.processing.not-a-list", "z"});
  conn().command({"RPUSH", "outbox.events", "w"});
  // Glob characters in the prefix are taken literally.
  conn().command({"RPUSH", "odd*prefix.c3", "v"});
  conn().command({"RPUSH", "oddXprefix.c4", "v"});
  // Enough other keys that SCAN needs several rounds.
  std::vector<std::vector<std::string>> filler;
  for (int i = 0; i < 3000; ++i)
    filler.push_back({"SET", "filler." + std::to_string(i), "f"});
  conn().pipeline(filler);
  EXPECT_EQ(queue.processing_lists("outbox.processing."),
            (strings{"outbox.processing.c1", "outbox.processing.c2"}));
  EXPECT_EQ(queue.processing_lists("odd*prefix."), strings{"odd*prefix.c3"});
  EXPECT_TRUE(queue.processing_lists("nothing.").empty());
}
