#include "tests/actors/writer_fixture.hpp"

#include <gmock/gmock.h>

// The writer's answers to request keys: a conflict reaches only its
// requester, a retry replays the original, and an invalid request is
// answered at once without holding up the group.

namespace outbox::test {
namespace {

using ActorWriterIdempotency = writer_fixture;

TEST_F(ActorWriterIdempotency, ConflictReachesOnlyItsRequester) {
  auto writer = started_writer();
  auto a = place_via(writer, "r-1", "apple", 1);
  commit_group();
  ASSERT_TRUE(a->value) << render(a->error);
  EXPECT_FALSE(a->value->replayed);
  EXPECT_EQ(metrics_->commits.load(), 1);

  // One group: B reuses r-1 with other parameters, C is a fresh order.
  auto b = place_via(writer, "r-1", "pear", 7);
  auto c = place_via(writer, "r-2", "plum", 3);
  commit_group();
  EXPECT_EQ(metrics_->commits.load(), 2);
  ASSERT_TRUE(b->arrived);
  EXPECT_FALSE(b->value);
  EXPECT_TRUE(has_code(b->error, actors::ec::idempotency_conflict))
      << render(b->error);
  EXPECT_EQ(b->error.category(), caf::atom("outbox"));
  ASSERT_TRUE(c->value) << render(c->error);
  EXPECT_NE(c->value->order_id, a->value->order_id);
  EXPECT_EQ(order_row(c->value->order_id), row("plum", 3));
  // Nothing of B's was written: A's order is unchanged, C's is the only new.
  EXPECT_EQ(count_rows("orders"), 2);
  EXPECT_EQ(count_rows("outbox"), 2);
  EXPECT_EQ(order_row(a->value->order_id), row("apple", 1));
  EXPECT_EQ(metrics_->orders_conflicted.load(), 1);
  EXPECT_EQ(metrics_->orders_placed.load(), 2);
}

TEST_F(ActorWriterIdempotency, SameKeySameParamsReplaysTheOriginal) {
  auto writer = started_writer();
  auto original = place_via(writer, "r-1", "apple", 2);
  commit_group();
  ASSERT_TRUE(original->value);

  auto again = place_via(writer, "r-1", "apple", 2);
  commit_group();
  ASSERT_TRUE(again->value) << render(again->error);
  EXPECT_TRUE(again->value->replayed);
  EXPECT_EQ(again->value->order_id, original->value->order_id);
  EXPECT_EQ(again->value->event_id, original->value->event_id);
  EXPECT_EQ(again->value->aggregate_id, original->value->aggregate_id);
  EXPECT_EQ(count_rows("orders"), 1);
  EXPECT_EQ(count_rows("outbox"), 1);
  EXPECT_EQ(metrics_->orders_replayed.load(), 1);
}

TEST_F(ActorWriterIdempotency,
       InvalidRequestIsAnsweredAtOnceAndSparesTheGroup) {
  auto writer = started_writer();
  auto before = place_via(writer, "r-1", "apple", 1);
  auto invalid = place_via(writer, "r-2", "pear", 0);
  auto after = place_via(writer, "", "plum", 2);
  run();
  // The invalid request is refused without waiting for the group.
  ASSERT_TRUE(invalid->arrived);
  EXPECT_FALSE(invalid->value);
  EXPECT_TRUE(has_code(invalid->error, actors::ec::invalid_input))
      << render(invalid->error);
  EXPECT_FALSE(before->arrived);
  EXPECT_FALSE(after->arrived);

  advance(5, 1);
  EXPECT_EQ(metrics_->commits.load(), 1);
  ASSERT_TRUE(before->value) << render(before->error);
  ASSERT_TRUE(after->value) << render(after->error);
  EXPECT_EQ(order_row(before->value->order_id), row("apple", 1));
  EXPECT_EQ(order_row(after->value->order_id), row("plum", 2));
  EXPECT_EQ(count_rows("orders"), 2);
  // r-2 was never recorded: a valid retry with that key is a new order.
  auto retry = place_via(writer, "r-2", "pear", 1);
  commit_group();
  ASSERT_TRUE(retry->value) << render(retry->error);
  EXPECT_FALSE(retry->value->replayed);
}

TEST_F(ActorWriterIdempotency, InvalidAppendIsAnsweredAtOnceAndSparesTheGroup) {
  auto order = place_order("apple", 1);
  auto writer = started_writer();
  auto paid = append_via(writer, order.aggregate_id, "OrderPaid");
  auto not_json = append_via(writer, order.aggregate_id, "OrderNoted", "{oops");
  auto not_object = append_via(writer, order.aggregate_id, "OrderNoted", "[1]");
  auto no_type = append_via(writer, order.aggregate_id, "");
  auto shipped = append_via(writer, order.aggregate_id, "OrderShipped");
  run();
  for (const auto& bad : {not_json, not_object, no_type}) {
    ASSERT_TRUE(bad->arrived);
    EXPECT_TRUE(has_code(bad->error, actors::ec::invalid_input))
        << render(bad->error);
  }
  EXPECT_FALSE(paid->arrived);
  advance(5, 1);
  EXPECT_EQ(metrics_->commits.load(), 1);
  ASSERT_TRUE(paid->value) << render(paid->error);
  ASSERT_TRUE(shipped->value) << render(shipped->error);
  EXPECT_EQ(paid->value->seq, 2);
  EXPECT_EQ(shipped->value->seq, 3);
  EXPECT_EQ(count_rows("outbox"), 3);
}

} // namespace
} // namespace outbox::test
