#include "actors/writer.hpp"

#include "storage/order_store.hpp"
#include "storage/types.hpp"
#include "tests/actors/pipeline_fixture.hpp"

#include <gmock/gmock.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

// The writer's group commit: requests gathered in one instant commit in one
// transaction when the delay runs out or the group is full; each requester
// gets its own answer, errors included; relays are nudged per commit.

using namespace outbox;
using outbox::test::has_code;
using outbox::test::pipeline_fixture;
using outbox::test::reply;

namespace {

using order_reply = std::shared_ptr<reply<actors::order_receipt>>;

struct order_ask {
  std::string sku;
  std::int64_t qty;
};

/// An order row as order_row() returns it.
std::pair<std::string, std::int64_t> row(const std::string& sku,
                                         std::int64_t qty) {
  return {sku, qty};
}

const std::vector<order_ask> five_orders{
    {"apple", 1}, {"pear", 2}, {"plum", 3}, {"fig", 4}, {"kiwi", 5}};

class writer_fixture : public pipeline_fixture {
protected:
  /// A writer that has started and waits for requests.
  caf::actor started_writer(int commit_batch = 100, int commit_delay_ms = 5) {
    auto writer = spawn_writer(writer_config(commit_batch, commit_delay_ms));
    run();
    return writer;
  }

  /// Sends the first `count` of five_orders to `writer`, without a key.
  std::vector<order_reply> place_first(const caf::actor& writer,
                                       std::size_t count) {
    std::vector<order_reply> replies;
    for (std::size_t i = 0; i < count; ++i)
      replies.push_back(
          place_via(writer, "", five_orders[i].sku, five_orders[i].qty));
    return replies;
  }

  /// Lets the writer take the requests sent and waits out its 5 ms group
  /// delay, so that the group commits.
  void commit_group() {
    run();
    advance(5, 1);
  }
};

using ActorWriter = writer_fixture;
using ActorWriterIdempotency = writer_fixture;
using ActorWriterNudge = writer_fixture;

TEST_F(ActorWriter, GroupCommitWaitsForTheDelayThenAnswersEachRequester) {
  auto writer = started_writer();
  auto replies = place_first(writer, 5);
  run();
  // Gathered, not committed: nobody has an answer, the database is empty.
  for (const auto& r : replies)
    EXPECT_FALSE(r->arrived);
  EXPECT_EQ(metrics_->commits.load(), 0);
  EXPECT_EQ(count_rows("orders"), 0);
  advance(4, 1);
  EXPECT_EQ(metrics_->commits.load(), 0);
  EXPECT_EQ(count_rows("orders"), 0);

  advance(1, 1);
  EXPECT_EQ(metrics_->commits.load(), 1) << "one transaction for the group";
  EXPECT_EQ(metrics_->orders_placed.load(), 5);
  EXPECT_EQ(count_rows("orders"), 5);
  EXPECT_EQ(count_rows("outbox"), 5);
  std::map<std::int64_t, int> order_ids;
  for (std::size_t i = 0; i < replies.size(); ++i) {
    const auto& r = *replies[i];
    ASSERT_TRUE(r.arrived) << i;
    ASSERT_TRUE(r.value) << i << ": " << render(r.error);
    // Each requester got the receipt of its own order, not a neighbour's.
    EXPECT_EQ(order_row(r.value->order_id),
              row(five_orders[i].sku, five_orders[i].qty))
        << i;
    EXPECT_EQ(r.value->aggregate_id,
              storage::order_aggregate_id(r.value->order_id));
    EXPECT_EQ(status_of(r.value->event_id),
              storage::row_status_text(storage::row_status::pending));
    EXPECT_EQ(created_at_of(r.value->event_id), now());
    EXPECT_FALSE(r.value->replayed);
    order_ids[r.value->order_id]++;
  }
  EXPECT_EQ(order_ids.size(), 5u);
  // The timer fired once; no empty commit follows.
  advance(50);
  EXPECT_EQ(metrics_->commits.load(), 1);
}

TEST_F(ActorWriter, NoDelayCommitsWhatWaitsInTheMailboxAsOneGroup) {
  auto writer = started_writer(100, 0);
  auto replies = place_first(writer, 5);
  // No time passes: the commit queued behind the five waiting requests.
  run();
  EXPECT_EQ(metrics_->commits.load(), 1) << "one transaction for the group";
  EXPECT_EQ(count_rows("orders"), 5);
  for (const auto& r : replies)
    EXPECT_TRUE(r->arrived);
  // A lone request later commits at once, in a group of its own.
  auto lone = place_via(writer, "", "lime", 6);
  run();
  EXPECT_TRUE(lone->arrived);
  EXPECT_EQ(metrics_->commits.load(), 2);
  EXPECT_EQ(count_rows("orders"), 6);
}

TEST_F(ActorWriter, AFullGroupCommitsAtOnceAndTheStaleTimerIsIgnored) {
  auto writer = started_writer(3, 5);
  auto replies = place_first(writer, 3);
  run(); // no virtual time passes
  EXPECT_EQ(metrics_->commits.load(), 1);
  EXPECT_EQ(count_rows("orders"), 3);
  for (std::size_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(replies[i]->value) << i;
    EXPECT_EQ(order_row(replies[i]->value->order_id),
              row(five_orders[i].sku, five_orders[i].qty));
  }

  // A fourth request starts a new group; the first group's timer (due at
  // 5 ms) must not commit it early.
  advance(2, 1);
  auto fourth = place_via(writer, "", "fig", 4);
  run();
  advance(3, 1); // the stale timer's time
  EXPECT_FALSE(fourth->arrived);
  EXPECT_EQ(metrics_->commits.load(), 1);
  advance(2, 1); // 5 ms after the fourth request
  ASSERT_TRUE(fourth->value) << render(fourth->error);
  EXPECT_EQ(metrics_->commits.load(), 2);
  EXPECT_EQ(order_row(fourth->value->order_id), row("fig", 4));
}

TEST_F(ActorWriter, AppendsInOneGroupGetConsecutiveSeqsPerAggregate) {
  auto first = place_order("apple", 1);
  auto second = place_order("pear", 1);
  auto writer = started_writer();
  // Interleaved across the two aggregates, all in one group.
  std::vector<
      std::pair<std::string, std::shared_ptr<reply<actors::event_receipt>>>>
      appends;
  for (auto type : {"OrderPaid", "OrderShipped", "OrderDelivered"})
    for (const auto* aggregate : {&first.aggregate_id, &second.aggregate_id})
      appends.emplace_back(
          *aggregate, append_via(writer, *aggregate, type,
                                 R"({"step":")" + std::string{type} + R"("})"));
  run();
  for (const auto& a : appends)
    EXPECT_FALSE(a.second->arrived);
  advance(5, 1);
  EXPECT_EQ(metrics_->commits.load(), 1);
  EXPECT_EQ(metrics_->events_appended.load(), 6);
  std::map<std::string, std::vector<std::int64_t>> seqs;
  for (const auto& [aggregate, r] : appends) {
    ASSERT_TRUE(r->value) << render(r->error);
    EXPECT_EQ(r->value->aggregate_id, aggregate);
    EXPECT_EQ(status_of(r->value->event_id),
              storage::row_status_text(storage::row_status::pending));
    seqs[aggregate].push_back(r->value->seq);
  }
  // Seq 1 is the OrderPlaced; the follow-ups continue in request order.
  EXPECT_EQ(seqs[first.aggregate_id], (std::vector<std::int64_t>{2, 3, 4}));
  EXPECT_EQ(seqs[second.aggregate_id], (std::vector<std::int64_t>{2, 3, 4}));
  EXPECT_EQ(payload_of(appends[4].second->value->event_id),
            R"({"step":"OrderDelivered"})");
}

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

TEST_F(ActorWriterNudge, EveryCommitNudgesEachRelayOnce) {
  auto writer = spawn_writer(writer_config(100, 5));
  auto [relay_a, nudges_a] = spawn_nudge_counter();
  auto [relay_b, nudges_b] = spawn_nudge_counter();
  caf::anon_send(writer, actors::relays_atom_v,
                 std::vector<caf::actor>{relay_a, relay_b});
  run();
  auto first = place_via(writer, "", "apple", 1);
  auto second = place_via(writer, "", "pear", 1);
  run();
  EXPECT_EQ(*nudges_a, 0) << "no nudge before the commit";
  advance(5, 1);
  ASSERT_TRUE(first->value);
  ASSERT_TRUE(second->value);
  EXPECT_EQ(*nudges_a, 1) << "one nudge per commit, not per order";
  EXPECT_EQ(*nudges_b, 1);

  // A new relay list replaces the old one.
  caf::anon_send(writer, actors::relays_atom_v,
                 std::vector<caf::actor>{relay_b});
  run();
  auto event = append_via(writer, first->value->aggregate_id, "OrderPaid");
  commit_group();
  ASSERT_TRUE(event->value);
  EXPECT_EQ(*nudges_a, 1);
  EXPECT_EQ(*nudges_b, 2);
}

} // namespace

namespace {

using ActorWriterBatch = writer_fixture;

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
