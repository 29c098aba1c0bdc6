#include "tests/actors/writer_fixture.hpp"

#include <gmock/gmock.h>

#include <vector>

// The writer's batches of tickets.

namespace outbox::test {
namespace {

using ActorWriterBatch = writer_fixture;

// A batch larger than a group is split across groups like as many single
// requests, and answered once, when its last ticket is committed.
TEST_F(ActorWriterBatch, ABatchLargerThanAGroupIsAnsweredOnceAllCommitted) {
  auto writer = started_writer(2, 5);
  std::vector<actors::order_ticket> tickets;
  for (const auto& o : five_orders)
    tickets.push_back({"", o.sku, o.qty});
  auto batch = place_batch_via(writer, tickets);
  run();
  EXPECT_EQ(metrics_->commits.load(), 2) << "two full groups at once";
  EXPECT_FALSE(batch->arrived) << "its fifth order waits for the delay";
  advance(5, 1);
  EXPECT_EQ(metrics_->commits.load(), 3);
  ASSERT_TRUE(batch->value) << render(batch->error);
  ASSERT_EQ(batch->value->size(), 5u);
  for (std::size_t i = 0; i < 5; ++i) {
    const auto& o = (*batch->value)[i];
    ASSERT_TRUE(o.ok()) << i << ": " << o.detail;
    EXPECT_EQ(order_row(o.receipt.order_id),
              row(five_orders[i].sku, five_orders[i].qty));
  }
}

// A batch is answered as its tickets sent one by one would be, each in its
// place: committed, replayed, conflicting or invalid, and one ticket's
// refusal spares the others.
TEST_F(ActorWriterBatch, EachTicketGetsTheAnswerItsOwnRequestWouldGet) {
  auto writer = started_writer();
  auto first = place_via(writer, "r-1", "apple", 1);
  commit_group();
  ASSERT_TRUE(first->value) << render(first->error);

  auto batch = place_batch_via(writer, {{"r-2", "pear", 2},
                                        {"r-1", "apple", 1},
                                        {"", "plum", 0},
                                        {"r-1", "fig", 9},
                                        {"", "kiwi", 5}});
  run();
  EXPECT_FALSE(batch->arrived) << "answered before its group committed";
  advance(5, 1);
  ASSERT_TRUE(batch->value) << render(batch->error);
  const auto& out = *batch->value;
  ASSERT_EQ(out.size(), 5u);
  ASSERT_TRUE(out[0].ok()) << out[0].detail;
  EXPECT_EQ(order_row(out[0].receipt.order_id), row("pear", 2));
  EXPECT_FALSE(out[0].receipt.replayed);
  ASSERT_TRUE(out[1].ok()) << out[1].detail;
  EXPECT_TRUE(out[1].receipt.replayed);
  EXPECT_EQ(out[1].receipt.order_id, first->value->order_id);
  EXPECT_EQ(out[2].error, actors::ec::invalid_input);
  EXPECT_THAT(out[2].detail, testing::HasSubstr("qty"));
  EXPECT_EQ(out[3].error, actors::ec::idempotency_conflict);
  EXPECT_EQ(out[3].detail, "r-1");
  ASSERT_TRUE(out[4].ok()) << out[4].detail;
  EXPECT_EQ(order_row(out[4].receipt.order_id), row("kiwi", 5));
  EXPECT_EQ(count_rows("orders"), 3);
  EXPECT_EQ(metrics_->commits.load(), 2) << "the batch in one group";
  EXPECT_EQ(metrics_->orders_placed.load(), 3);
  EXPECT_EQ(metrics_->orders_replayed.load(), 1);
  EXPECT_EQ(metrics_->orders_conflicted.load(), 1);
}

TEST_F(ActorWriterBatch, FollowUpsInOrderAndABadOneRefusedAlone) {
  auto order = place_order("apple", 1);
  auto writer = started_writer();
  auto batch = append_batch_via(
      writer, {{order.aggregate_id, "OrderPaid", "{}"},
               {order.aggregate_id, "OrderNoted", "[1]"},
               {order.aggregate_id, "", "{}"},
               {order.aggregate_id, "OrderShipped", R"({"carrier":"post"})"}});
  commit_group();
  ASSERT_TRUE(batch->value) << render(batch->error);
  const auto& out = *batch->value;
  ASSERT_EQ(out.size(), 4u);
  ASSERT_TRUE(out[0].ok()) << out[0].detail;
  EXPECT_EQ(out[0].receipt.seq, 2);
  EXPECT_EQ(out[1].error, actors::ec::invalid_input);
  EXPECT_EQ(out[2].error, actors::ec::invalid_input);
  ASSERT_TRUE(out[3].ok()) << out[3].detail;
  EXPECT_EQ(out[3].receipt.seq, 3);
  EXPECT_EQ(payload_of(out[3].receipt.event_id), R"({"carrier":"post"})");
  EXPECT_EQ(count_rows("outbox"), 3);
}

TEST_F(ActorWriterBatch, AnEmptyBatchIsAnsweredAtOnce) {
  auto writer = started_writer();
  auto orders = place_batch_via(writer, {});
  auto events = append_batch_via(writer, {});
  run();
  ASSERT_TRUE(orders->value) << render(orders->error);
  EXPECT_TRUE(orders->value->empty());
  ASSERT_TRUE(events->value) << render(events->error);
  EXPECT_TRUE(events->value->empty());
  EXPECT_EQ(metrics_->commits.load(), 0);
}

} // namespace
} // namespace outbox::test
