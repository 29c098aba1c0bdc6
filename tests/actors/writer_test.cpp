#include "tests/actors/writer_fixture.hpp"

#include <gmock/gmock.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

// The writer's group commit: requests gathered in one instant commit in one
// transaction when the delay runs out or the group is full; each requester
// gets its own answer, errors included; relays are nudged per commit.
// Its idempotency and batches have files of their own.

namespace outbox::test {
namespace {

using ActorWriter = writer_fixture;
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

TEST_F(ActorWriterNudge, EveryCommitNudgesEachRelayOnce) {
  auto writer = spawn_writer(writer_config(100, 5));
  auto [relay_a, nudges_a] = spawn_nudge_counter();
  auto [relay_b, nudges_b] = spawn_nudge_counter();
  caf::anon_send(writer, actors::relays_atom_v,
                 std::vector<actors::relay_actor>{relay_a, relay_b});
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
                 std::vector<actors::relay_actor>{relay_b});
  run();
  auto event = append_via(writer, first->value->aggregate_id, "OrderPaid");
  commit_group();
  ASSERT_TRUE(event->value);
  EXPECT_EQ(*nudges_a, 1);
  EXPECT_EQ(*nudges_b, 2);
}

} // namespace
} // namespace outbox::test
