#include "broker/consumer_lock.hpp"

#include "broker/broker_error.hpp"
#include "broker/fence.hpp"
#include "broker/reliable_queue.hpp"

#include "tests/broker/inbox_fixture.hpp"

#include <hiredis/hiredis.h>

#include <stdexcept>
#include <string>
#include <vector>

// The consumers' lock and the fence on a private Redis: one holder at a
// time, renewal, release only by the holder; a fenced pop, apply, remove or
// recover by a process that lost the lock moves and applies nothing.

namespace outbox::test {
namespace {

class BrokerConsumerLock : public inbox_fixture {
protected:
  std::string holder_of() {
    auto r = conn().command({"GET", names_.consumer_lock()});
    return r->type == REDIS_REPLY_STRING ? broker::reply_text(*r) : "";
  }

  long long ttl_ms() {
    return conn().command({"PTTL", names_.consumer_lock()})->integer;
  }

  broker::fence fence_of(const std::string& holder) {
    return {names_.consumer_lock(), holder};
  }

  /// Expects `call` to throw broker_error(fenced) naming the holder.
  template <class Call>
  void expect_fenced(Call call, const std::string& holder) {
    try {
      call();
      ADD_FAILURE() << "not fenced";
    } catch (const broker::broker_error& e) {
      EXPECT_EQ(e.code(), broker::broker_errc::fenced) << e.what();
      EXPECT_NE(std::string{e.what()}.find(holder), std::string::npos)
          << e.what();
    }
  }
};

TEST_F(BrokerConsumerLock, OneHolderAtATime) {
  broker::consumer_lock lock{conn(), names_.consumer_lock()};
  EXPECT_EQ(lock.acquire("a#1", 60'000), "a#1");
  EXPECT_EQ(lock.acquire("b#1", 60'000), "a#1") << "b waits while a holds it";
  EXPECT_EQ(holder_of(), "a#1");
  conn().command({"PEXPIRE", names_.consumer_lock(), "100"});
  EXPECT_EQ(lock.renew("a#1", 60'000), "a#1");
  EXPECT_GT(ttl_ms(), 1000) << "renewing extends the ttl";
  EXPECT_EQ(lock.renew("b#1", 60'000), "a#1") << "renew never takes it";
  EXPECT_EQ(holder_of(), "a#1");
}

TEST_F(BrokerConsumerLock, OnlyTheHolderReleasesIt) {
  broker::consumer_lock lock{conn(), names_.consumer_lock()};
  ASSERT_EQ(lock.acquire("a#1", 60'000), "a#1");
  lock.release("b#1");
  EXPECT_EQ(holder_of(), "a#1") << "a late release cannot free another's";
  lock.release("a#1");
  EXPECT_EQ(holder_of(), "");
  EXPECT_EQ(lock.acquire("b#1", 60'000), "b#1") << "taken over at once";
}

TEST_F(BrokerConsumerLock, ALapsedLockIsNotRenewedButAcquiredAnew) {
  broker::consumer_lock lock{conn(), names_.consumer_lock()};
  ASSERT_EQ(lock.acquire("a#1", 60'000), "a#1");
  conn().command({"DEL", names_.consumer_lock()}); // as if the ttl ran out
  EXPECT_EQ(lock.renew("a#1", 60'000), "") << "lapsed: renewal says so";
  EXPECT_EQ(holder_of(), "");
  EXPECT_EQ(lock.acquire("b#1", 60'000), "b#1");
}

TEST_F(BrokerConsumerLock, AFencedApplyAppliesNothing) {
  broker::consumer_lock{conn(), names_.consumer_lock()}.acquire("b", 60'000);
  broker::inbox fenced{conn(), names_, fence_of("a")};
  auto entry = order_placed("e1", "order-1", 1, "apple", 3);
  expect_fenced([&] { fenced.apply_batch({entry}); }, "b");
  EXPECT_EQ(hash_field(names_.processed, "e1"), "");
  EXPECT_EQ(reserved("apple"), 0);
  EXPECT_EQ(counter("consumed"), 0);

  // The holder's own fence lets the same entry through.
  broker::inbox holder{conn(), names_, fence_of("b")};
  EXPECT_EQ(holder.apply(entry).result, outcome::applied);
  EXPECT_EQ(reserved("apple"), 3);
}

TEST_F(BrokerConsumerLock, ALapsedLockFencesItsLastHolder) {
  // Nobody holds the lock: maybe another process took it, recovered this
  // one's entries and died. Only a new acquisition may consume again.
  broker::inbox fenced{conn(), names_, fence_of("a#1")};
  expect_fenced(
      [&] { fenced.apply(order_placed("e1", "order-1", 1, "pear", 1)); },
      "nobody");
  EXPECT_EQ(holder_of(), "") << "the fence never takes the lock";
  EXPECT_EQ(reserved("pear"), 0);
}

TEST_F(BrokerConsumerLock, AFencedPopMovesNothing) {
  broker::consumer_lock{conn(), names_.consumer_lock()}.acquire("b", 60'000);
  conn().command({"RPUSH", "q", "x1", "x2"});
  broker::reliable_queue fenced{conn(), fence_of("a")};
  expect_fenced([&] { fenced.pop_batch("q", "q.processing", 10, 1 << 20); },
                "b");
  EXPECT_EQ(list("q"), (std::vector<std::string>{"x1", "x2"}));
  EXPECT_TRUE(list("q.processing").empty());

  broker::reliable_queue holder{conn(), fence_of("b")};
  EXPECT_EQ(holder.pop_batch("q", "q.processing", 10, 1 << 20),
            (std::vector<std::string>{"x1", "x2"}));
}

TEST_F(BrokerConsumerLock, AFencedRemoveRemovesNothing) {
  // Frozen between apply and remove: the new holder recovered the batch and
  // may have popped it again; the woken process must not take it away.
  broker::consumer_lock{conn(), names_.consumer_lock()}.acquire("b#1", 60'000);
  conn().command({"RPUSH", "p", "x1", "x2", "x3"});
  broker::reliable_queue fenced{conn(), fence_of("a#1")};
  expect_fenced([&] { fenced.remove_batch("p", {"x1", "x2"}); }, "b#1");
  expect_fenced([&] { fenced.remove("p", "x1"); }, "b#1");
  EXPECT_EQ(list("p"), (std::vector<std::string>{"x1", "x2", "x3"}));

  broker::reliable_queue holder{conn(), fence_of("b#1")};
  EXPECT_EQ(holder.remove_batch("p", {"x1", "x2"}), 2u);
  holder.remove("p", "x3");
  EXPECT_TRUE(list("p").empty());
}

TEST_F(BrokerConsumerLock, AFencedRecoverMovesNothing) {
  // Frozen between two lists of its recovery: the lists left are the new
  // holder's business now.
  broker::consumer_lock{conn(), names_.consumer_lock()}.acquire("b#1", 60'000);
  conn().command({"RPUSH", "p", "x1", "x2"});
  conn().command({"RPUSH", "q", "y1"});
  broker::reliable_queue fenced{conn(), fence_of("a#1")};
  expect_fenced([&] { fenced.recover("p", "q", "c"); }, "b#1");
  EXPECT_EQ(list("p"), (std::vector<std::string>{"x1", "x2"}));
  EXPECT_EQ(list("q"), std::vector<std::string>{"y1"});

  broker::reliable_queue holder{conn(), fence_of("b#1")};
  EXPECT_EQ(holder.recover("p", "q", "c"), 2u);
  EXPECT_EQ(list("q"), (std::vector<std::string>{"x1", "x2", "y1"}));
}

TEST_F(BrokerConsumerLock, ALapsedLockRefusesRemoveAndRecover) {
  conn().command({"RPUSH", "p", "x1"});
  broker::reliable_queue fenced{conn(), fence_of("a#1")};
  expect_fenced([&] { fenced.recover("p", "q", "c"); }, "nobody");
  expect_fenced([&] { fenced.remove_batch("p", {"x1"}); }, "nobody");
  EXPECT_EQ(list("p"), std::vector<std::string>{"x1"});
  EXPECT_TRUE(list("q").empty());
  EXPECT_EQ(holder_of(), "") << "the fence never takes the lock";
}

TEST_F(BrokerConsumerLock, AFencedQueueHasNoBlockingPop) {
  // BLMOVE cannot check the lock: a fenced consumer waits on doorbells.
  broker::reliable_queue fenced{conn(), fence_of("a#1")};
  EXPECT_THROW(fenced.pop("q", "q.processing", 0), std::logic_error);
}

TEST_F(BrokerConsumerLock, WithoutAFenceNothingIsChecked) {
  broker::consumer_lock{conn(), names_.consumer_lock()}.acquire("b", 60'000);
  broker::inbox unfenced{conn(), names_};
  EXPECT_EQ(unfenced.apply(order_placed("e1", "order-1", 1, "plum", 2)).result,
            outcome::applied);
  conn().command({"RPUSH", "q", "x1"});
  broker::reliable_queue queue{conn()};
  EXPECT_EQ(queue.pop_batch("q", "q.processing", 10, 1 << 20).size(), 1u);
  conn().command({"RPUSH", "q.processing", "x2", "x3"});
  EXPECT_EQ(queue.remove_batch("q.processing", {"x1"}), 1u);
  queue.remove("q.processing", "x2");
  EXPECT_EQ(queue.recover("q.processing", "q", "c"), 1u);
  EXPECT_EQ(list("q"), std::vector<std::string>{"x3"});
  EXPECT_EQ(holder_of(), "b");
}

} // namespace
} // namespace outbox::test
