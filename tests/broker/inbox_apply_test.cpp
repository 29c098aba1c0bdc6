#include "broker/inbox.hpp"

#include "broker/broker_error.hpp"
#include "broker/connection.hpp"
#include "broker/dead_letters.hpp"
#include "tests/broker/inbox_fixture.hpp"

#include <gmock/gmock.h>

// One entry at a time through the inbox script: dedup, the effect, the
// order check, and what happens when Redis or its data is not as expected.

using namespace outbox::broker;
using BrokerInbox = outbox::test::inbox_fixture;

TEST_F(BrokerInbox, FirstDeliveryAppliesEffectAndRecordsResult) {
  inbox box{conn(), names_};
  auto result = box.apply(order_placed("e1", "order-1", 1, "A-1", 3));
  EXPECT_EQ(result.result, outcome::applied);
  EXPECT_FALSE(result.order_violation);
  EXPECT_EQ(reserved("A-1"), 3);
  EXPECT_EQ(counter("consumed"), 1);
  EXPECT_EQ(hash_integer(names_.aggregate_seq, "order-1"), 1);
  auto record = json::parse(hash_field(names_.processed, "e1"));
  EXPECT_EQ(record["event_type"], "OrderPlaced");
  EXPECT_EQ(record["aggregate_id"], "order-1");
  EXPECT_EQ(record["seq"], 1);
  EXPECT_EQ(record["sku"], "A-1");
  EXPECT_EQ(record["qty"], 3);
  EXPECT_GT(record["at"].get<std::int64_t>(), 1600000000000);
}

TEST_F(BrokerInbox, EntryOfAnOlderRelayWithoutVersionIsApplied) {
  inbox box{conn(), names_};
  auto current = json::parse(order_placed("e1", "order-1", 1, "A-1", 3));
  ASSERT_EQ(current["v"], 1);
  auto older = current;
  older.erase("v");
  older["event_id"] = "e2";
  older["seq"] = 2;
  EXPECT_EQ(box.apply(current.dump()).result, outcome::applied);
  EXPECT_EQ(box.apply(older.dump()).result, outcome::applied);
  EXPECT_EQ(box.apply(older.dump()).result, outcome::duplicate);
  EXPECT_EQ(reserved("A-1"), 6);
}

TEST_F(BrokerInbox, RepeatedDeliveryAppliesOnce) {
  inbox box{conn(), names_};
  auto entry = order_placed("e1", "order-1", 1, "A-1", 2);
  EXPECT_EQ(box.apply(entry).result, outcome::applied);
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(box.apply(entry).result, outcome::duplicate);
  EXPECT_EQ(reserved("A-1"), 2);
  EXPECT_EQ(counter("consumed"), 1);
  EXPECT_EQ(counter("duplicates"), 4);
  EXPECT_EQ(counter("order_violations"), 0);
  // Same event_id, republished later (other published_at): still a dup.
  auto later = json::parse(entry);
  later["published_at"] = 1800000000000;
  EXPECT_EQ(box.apply(later.dump()).result, outcome::duplicate);
  EXPECT_EQ(reserved("A-1"), 2);
}

TEST_F(BrokerInbox, FollowUpEventsAdvanceTheAggregate) {
  inbox box{conn(), names_};
  EXPECT_EQ(box.apply(order_placed("e1", "order-1", 1, "A", 1)).result,
            outcome::applied);
  auto paid = box.apply(follow_up("e2", "order-1", 2, "OrderPaid"));
  auto shipped = box.apply(follow_up("e3", "order-1", 3, "OrderShipped"));
  EXPECT_EQ(paid.result, outcome::applied);
  EXPECT_EQ(shipped.result, outcome::applied);
  EXPECT_FALSE(paid.order_violation);
  EXPECT_FALSE(shipped.order_violation);
  EXPECT_EQ(reserved("A"), 1); // only OrderPlaced reserves
  EXPECT_EQ(hash_integer(names_.aggregate_seq, "order-1"), 3);
  EXPECT_EQ(counter("consumed"), 3);
  auto record = json::parse(hash_field(names_.processed, "e3"));
  EXPECT_EQ(record["event_type"], "OrderShipped");
  EXPECT_FALSE(record.contains("sku"));
  // A duplicate of an older event is not an order violation.
  EXPECT_EQ(box.apply(follow_up("e2", "order-1", 2, "OrderPaid")).result,
            outcome::duplicate);
  EXPECT_EQ(counter("order_violations"), 0);
}

TEST_F(BrokerInbox, OrderViolationWhenSeqTwoComesBeforeSeqOne) {
  inbox box{conn(), names_};
  auto second = box.apply(follow_up("e2", "order-9", 2, "OrderPaid"));
  EXPECT_EQ(second.result, outcome::applied);
  EXPECT_TRUE(second.order_violation);
  // Seq 1 arriving after seq 2 is out of order too.
  auto first = box.apply(order_placed("e1", "order-9", 1, "B", 1));
  EXPECT_EQ(first.result, outcome::applied);
  EXPECT_TRUE(first.order_violation);
  EXPECT_EQ(counter("order_violations"), 2);
  EXPECT_EQ(hash_integer(names_.aggregate_seq, "order-9"), 2);
  // The next one in line is fine again; other aggregates are unaffected.
  EXPECT_FALSE(
      box.apply(follow_up("e3", "order-9", 3, "OrderPaid")).order_violation);
  EXPECT_FALSE(
      box.apply(order_placed("f1", "order-10", 1, "B", 1)).order_violation);
  EXPECT_EQ(counter("order_violations"), 2);
}

TEST_F(BrokerInbox, ReloadsScriptAfterScriptFlush) {
  inbox box{conn(), names_};
  EXPECT_EQ(box.apply(order_placed("e1", "o1", 1, "A", 1)).result,
            outcome::applied);
  conn().command({"SCRIPT", "FLUSH"});
  EXPECT_EQ(box.apply(order_placed("e2", "o2", 1, "A", 1)).result,
            outcome::applied);
  EXPECT_EQ(reserved("A"), 2);
}

TEST_F(BrokerInbox, PoisonEffectIsDeadLetteredAndItsAggregateMovesOn) {
  inbox box{conn(), names_};
  conn().command({"HSET", names_.reserved, "A", "not a number"});
  auto first = order_placed("e1", "o1", 1, "A", 1);
  auto poisoned = box.apply(first);
  EXPECT_EQ(poisoned.result, outcome::dead_lettered);
  EXPECT_THAT(poisoned.reason, testing::HasSubstr("effect failed"));
  EXPECT_THAT(poisoned.reason, testing::HasSubstr("not an integer"));
  // Applied nowhere: no dedup record, no partial effect; the entry and why
  // wait in the dead letters.
  EXPECT_EQ(hash_field(names_.processed, "e1"), "");
  EXPECT_EQ(hash_field(names_.reserved, "A"), "not a number");
  EXPECT_EQ(counter("dead_lettered"), 1);
  EXPECT_EQ(counter("consumed"), 0);
  auto record = json::parse(
      reply_text(*conn().command({"LINDEX", names_.dead_letter, "0"})));
  EXPECT_EQ(record.at("entry").get<std::string>(), first);
  EXPECT_NE(record.at("reason").get<std::string>().find("effect failed"),
            std::string::npos);

  // The aggregate's next event is in order: the poison was set aside.
  auto next = box.apply(follow_up("e2", "o1", 2, "OrderPaid"));
  EXPECT_EQ(next.result, outcome::applied);
  EXPECT_FALSE(next.order_violation);

  // Another copy (a recovery put it back, or a relay published it again)
  // is absorbed: one record per event, even once the cause is fixed.
  conn().command({"HDEL", names_.reserved, "A"});
  EXPECT_EQ(box.apply(first).result, outcome::duplicate);
  EXPECT_EQ(counter("dead_lettered"), 1);
  EXPECT_EQ(list(names_.dead_letter).size(), 1u);

  // The replay applies it once, late on purpose rather than out of order.
  auto put_back = replay_dead_letters(conn(), names_, {{"e1"}, false});
  ASSERT_EQ(put_back.replayed.size(), 1u);
  EXPECT_EQ(hash_field(names_.seq_gaps(), "o1:1"), "replay");
  auto queued = conn().command({"LPOP", put_back.replayed[0].queue});
  ASSERT_EQ(reply_text(*queued), first);
  auto replayed = box.apply(first);
  EXPECT_EQ(replayed.result, outcome::applied);
  EXPECT_FALSE(replayed.order_violation);
  EXPECT_EQ(reserved("A"), 1);
  EXPECT_EQ(hash_field(names_.seq_gaps(), "o1:1"), "") << "mark cleared";
  EXPECT_EQ(box.apply(first).result, outcome::duplicate);
  EXPECT_EQ(reserved("A"), 1);
  EXPECT_EQ(counter("order_violations"), 0);
}

TEST_F(BrokerInbox, OverflowingEffectIsDeadLettered) {
  inbox box{conn(), names_};
  conn().command({"HSET", names_.reserved, "A", "9223372036854775800"});
  auto r = box.apply(order_placed("e1", "o1", 1, "A", 100));
  EXPECT_EQ(r.result, outcome::dead_lettered);
  EXPECT_THAT(r.reason, testing::HasSubstr("overflow"));
  EXPECT_EQ(hash_field(names_.reserved, "A"), "9223372036854775800");
  EXPECT_EQ(hash_field(names_.processed, "e1"), "");
}

TEST_F(BrokerInbox, WrongTypedKeyIsRejectedBeforeAnyWrite) {
  inbox box{conn(), names_};
  conn().command({"SET", names_.counters, "oops"});
  EXPECT_THROW(box.apply(order_placed("e1", "o1", 1, "A", 1)), broker_error);
  EXPECT_EQ(hash_field(names_.processed, "e1"), "");
  EXPECT_EQ(reserved("A"), 0);
}

TEST_F(BrokerInbox, LargeIntegersStayExact) {
  inbox box{conn(), names_};
  std::int64_t seq = 123456789012345;
  box.apply(order_placed("e1", "o1", seq, "A", 1000000000000));
  EXPECT_EQ(hash_field(names_.aggregate_seq, "o1"), "123456789012345");
  EXPECT_EQ(hash_field(names_.reserved, "A"), "1000000000000");
  auto record = json::parse(hash_field(names_.processed, "e1"));
  EXPECT_EQ(record["seq"], seq);
}
