#include "broker/reliable_queue.hpp"

#include "broker/broker_error.hpp"
#include "tests/broker/redis_fixture.hpp"

#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

using namespace outbox::broker;
using outbox::test::redis_fixture;

namespace {

using BrokerQueue = redis_fixture;

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
  EXPECT_EQ(queue.pop_batch("q", "p", 3, 1000), (strings{"a", "b", "c"}));
  EXPECT_EQ(list("p"), (strings{"a", "b", "c"}));
  EXPECT_EQ(list("q"), (strings{"d", "e"}));
  EXPECT_EQ(queue.pop_batch("q", "p", 10, 1000), (strings{"d", "e"}));
  EXPECT_EQ(list("p"), (strings{"a", "b", "c", "d", "e"}));
  EXPECT_TRUE(queue.pop_batch("q", "p", 10, 1000).empty());
  conn().command({"RPUSH", "q", "f"});
  EXPECT_TRUE(queue.pop_batch("q", "p", 0, 1000).empty());
  EXPECT_EQ(list("q"), strings{"f"});
}

TEST_F(BrokerQueue, PopBatchStopsAtTheByteCapButTakesOneAtLeast) {
  reliable_queue queue{conn()};
  conn().command({"RPUSH", "q", "aaaa", "bbbb", "cccc", "dddddddddd", "e"});
  // 4 + 4 fits in 9 bytes, a third entry would not.
  EXPECT_EQ(queue.pop_batch("q", "p", 10, 9), (strings{"aaaa", "bbbb"}));
  EXPECT_EQ(list("q"), (strings{"cccc", "dddddddddd", "e"}))
      << "the entry over the cap goes back to the head";
  // Exactly at the cap is within it.
  EXPECT_EQ(queue.pop_batch("q", "p", 10, 4), strings{"cccc"});
  // An entry bigger than the cap on its own still goes, alone.
  EXPECT_EQ(queue.pop_batch("q", "p", 10, 4), strings{"dddddddddd"});
  EXPECT_EQ(queue.pop_batch("q", "p", 10, 4), strings{"e"});
  EXPECT_EQ(list("p"), (strings{"aaaa", "bbbb", "cccc", "dddddddddd", "e"}));
  EXPECT_TRUE(list("q").empty());
}

TEST_F(BrokerQueue, PopBatchAppendsAfterWhatTheProcessingListHolds) {
  reliable_queue queue{conn()};
  conn().command({"RPUSH", "p", "left-over"});
  conn().command({"RPUSH", "q", "a", "b"});
  EXPECT_EQ(queue.pop_batch("q", "p", 5, 1000), (strings{"a", "b"}));
  EXPECT_EQ(list("p"), (strings{"left-over", "a", "b"}));
}

TEST_F(BrokerQueue, PopBatchIsBinarySafe) {
  reliable_queue queue{conn()};
  std::string odd("a\0b\r\n\xff", 6);
  conn().command({"RPUSH", "q", odd, ""});
  EXPECT_EQ(queue.pop_batch("q", "p", 5, 1000), (strings{odd, ""}));
}

TEST_F(BrokerQueue, PopOnWrongTypeIsRejected) {
  reliable_queue queue{conn()};
  conn().command({"SET", "q", "x"});
  conn().command({"RPUSH", "q2", "a"});
  EXPECT_THROW(queue.pop("q", "p", 0), broker_error);
  EXPECT_THROW(queue.pop_batch("q", "p", 2, 1000), broker_error);
  EXPECT_THROW(queue.pop_batch("q2", "q2", 2, 1000), std::invalid_argument);
}

TEST_F(BrokerQueue, PopBatchIntoAWrongTypedProcessingListLosesNothing) {
  reliable_queue queue{conn()};
  conn().command({"SET", "p", "x"});
  conn().command({"RPUSH", "q", "a", "b"});
  EXPECT_THROW(queue.pop_batch("q", "p", 2, 1000), broker_error);
  EXPECT_EQ(list("q"), (strings{"a", "b"}));
}

TEST_F(BrokerQueue, PopBatchSurvivesScriptFlush) {
  reliable_queue queue{conn()};
  conn().command({"RPUSH", "q", "a", "b"});
  EXPECT_EQ(queue.pop_batch("q", "p", 1, 1000), strings{"a"});
  conn().command({"SCRIPT", "FLUSH"});
  EXPECT_EQ(queue.pop_batch("q", "p", 1, 1000), strings{"b"});
  EXPECT_EQ(list("p"), (strings{"a", "b"}));
}

TEST_F(BrokerQueue, RemoveBatchRemovesTheBatchOnly) {
  reliable_queue queue{conn()};
  conn().command({"RPUSH", "q", "a", "b", "c"});
  auto batch = queue.pop_batch("q", "p", 2, 1000);
  ASSERT_EQ(batch, (strings{"a", "b"}));
  queue.pop("q", "p", 0);
  EXPECT_EQ(queue.remove_batch("p", batch), 2u);
  EXPECT_EQ(list("p"), strings{"c"});
  EXPECT_EQ(queue.remove_batch("p", {}), 0u);
  EXPECT_EQ(list("p"), strings{"c"});
}

TEST_F(BrokerQueue, RemoveBatchTakesOneCopyPerEntry) {
  reliable_queue queue{conn()};
  // The same text delivered twice, once in this batch: one copy goes.
  conn().command({"RPUSH", "p", "same", "same", "other"});
  EXPECT_EQ(queue.remove_batch("p", {"same", "other"}), 2u);
  EXPECT_EQ(list("p"), strings{"same"});
  // Twice in the batch: both copies go.
  conn().command({"RPUSH", "p", "same"});
  EXPECT_EQ(queue.remove_batch("p", {"same", "same"}), 2u);
  EXPECT_TRUE(list("p").empty());
}

TEST_F(BrokerQueue, RemoveBatchIsRightWhenTheListHoldsMoreOrLess) {
  reliable_queue queue{conn()};
  // A pop whose reply was lost left "x" in front of the batch: removing by
  // count from the head (LTRIM) would drop "x" and keep "b".
  conn().command({"RPUSH", "p", "x"});
  conn().command({"RPUSH", "q", "a", "b", "c"});
  auto batch = queue.pop_batch("q", "p", 2, 1000);
  ASSERT_EQ(list("p"), (strings{"x", "a", "b"}));
  EXPECT_EQ(queue.remove_batch("p", batch), 2u);
  EXPECT_EQ(list("p"), strings{"x"});
  // Recovered meanwhile (the list went back to the queue), then one entry
  // popped again: only what is there is removed, nothing else is touched.
  batch = queue.pop_batch("q", "p", 1, 1000);
  ASSERT_EQ(batch, strings{"c"});
  EXPECT_EQ(queue.recover("p", "q", "c"), 2u);
  ASSERT_EQ(list("q"), (strings{"x", "c"}));
  ASSERT_EQ(queue.pop_batch("q", "p", 1, 1000), strings{"x"});
  EXPECT_EQ(queue.remove_batch("p", batch), 0u);
  EXPECT_EQ(list("p"), strings{"x"});
  EXPECT_EQ(list("q"), strings{"c"});
}

TEST_F(BrokerQueue, RemoveBatchOnWrongTypeIsRejected) {
  reliable_queue queue{conn()};
  conn().command({"SET", "p", "x"});
  EXPECT_THROW(queue.remove_batch("p", {"a"}), broker_error);
}

TEST_F(BrokerQueue, RecoverPutsInFlightEntriesBackAtTheHeadInOrder) {
  reliable_queue queue{conn()};
  conn().command({"RPUSH", "q", "a", "b", "c", "d"});
  queue.pop("q", "p", 0);
  queue.pop("q", "p", 0);
  ASSERT_EQ(list("q"), (strings{"c", "d"}));
  ASSERT_EQ(list("p"), (strings{"a", "b"}));
  EXPECT_EQ(queue.recover("p", "q", "c"), 2u);
  EXPECT_EQ(list("q"), (strings{"a", "b", "c", "d"}));
  EXPECT_TRUE(list("p").empty());
  EXPECT_EQ(hash_integer("c", "recovered"), 2);
  EXPECT_EQ(queue.recover("p", "q", "c"), 0u);
  EXPECT_EQ(hash_integer("c", "recovered"), 2);
  EXPECT_THROW(queue.recover("q", "q", "c"), std::invalid_argument);
}

TEST_F(BrokerQueue, RecoverMovesNothingWhenTheCountersAreNoHash) {
  reliable_queue queue{conn()};
  conn().command({"RPUSH", "p", "a"});
  conn().command({"SET", "c", "x"});
  EXPECT_THROW(queue.recover("p", "q", "c"), broker_error);
  EXPECT_EQ(list("p"), strings{"a"});
  EXPECT_TRUE(list("q").empty());
}

TEST_F(BrokerQueue, RecoverSurvivesScriptFlush) {
  reliable_queue queue{conn()};
  conn().command({"RPUSH", "p", "a"});
  EXPECT_EQ(queue.recover("p", "q", "c"), 1u);
  conn().command({"SCRIPT", "FLUSH"});
  conn().command({"RPUSH", "p", "b"});
  EXPECT_EQ(queue.recover("p", "q", "c"), 1u);
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

TEST_F(BrokerQueue, DoorbellWaitReturnsOnATokenAndTimesOutWithout) {
  reliable_queue q{conn()};
  // No token: the wait lasts its timeout and reports nothing.
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(q.wait_for_doorbell({"q.0:ready", "q.1:ready"}, 150));
  EXPECT_GE(std::chrono::steady_clock::now() - start,
            std::chrono::milliseconds(100));
  // A token on either doorbell ends the wait and is taken.
  conn().command({"LPUSH", "q.1:ready", "1"});
  EXPECT_TRUE(q.wait_for_doorbell({"q.0:ready", "q.1:ready"}, 5000));
  EXPECT_TRUE(list("q.1:ready").empty());
  EXPECT_FALSE(q.wait_for_doorbell({}, 100)) << "no doorbell: no wait";
}
