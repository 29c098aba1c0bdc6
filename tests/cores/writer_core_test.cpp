#include "actors/writer_core.hpp"

#include "metrics/run_metrics.hpp"
#include "storage/order_store.hpp"
#include "storage/store_error.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

// The writer's decisions without an actor: when a group commits, what each
// requester is answered, what a failed group costs. No CAF here: the core
// is plain C++ over an order_store, here one in memory.

namespace outbox::test {
namespace {

using actors::commit_plan;
using actors::ec;

/// What the fake store saw and will do.
struct order_book {
  /// Request sizes of every place_orders and append_events call, in order.
  std::vector<std::size_t> order_groups;
  std::vector<std::size_t> event_groups;
  /// Request ids already placed: a second time is a replay.
  std::set<std::string> keys;
  /// The next group throws this, once.
  std::optional<storage::store_errc> fail_next;
  std::int64_t next_id = 1;
};

class memory_order_store : public storage::order_store {
public:
  explicit memory_order_store(std::shared_ptr<order_book> book)
      : book_(std::move(book)) {}

  storage::placed_order place_order(const storage::order_request& request,
                                    storage::millis now) override {
    return place_orders({request}, now).front();
  }
  storage::appended_event append_event(const storage::event_request& request,
                                       storage::millis now) override {
    return append_events({request}, now).front();
  }

  std::vector<storage::placed_order>
  place_orders(const std::vector<storage::order_request>& requests,
               storage::millis) override {
    take_group(book_->order_groups, requests.size());
    std::vector<storage::placed_order> placed;
    for (const auto& r : requests) {
      storage::placed_order p;
      p.order_id = book_->next_id++;
      p.event_id = "e-" + std::to_string(p.order_id);
      p.aggregate_id = storage::order_aggregate_id(p.order_id);
      if (r.request_id && r.request_id->rfind("clash", 0) == 0)
        p.result = storage::placed_order::outcome::conflict;
      else if (r.request_id && !book_->keys.insert(*r.request_id).second)
        p.result = storage::placed_order::outcome::replayed;
      placed.push_back(p);
    }
    return placed;
  }

  std::vector<storage::appended_event>
  append_events(const std::vector<storage::event_request>& requests,
                storage::millis) override {
    take_group(book_->event_groups, requests.size());
    std::vector<storage::appended_event> appended;
    for (const auto& r : requests)
      appended.push_back(
          {"ev-" + std::to_string(book_->next_id++), r.aggregate_id, 2, false});
    return appended;
  }

  void set_before_commit(std::function<void()>) override {}

private:
  /// Notes a group of `size` requests; throws if a failure is due.
  void take_group(std::vector<std::size_t>& groups, std::size_t size) {
    groups.push_back(size);
    if (!book_->fail_next)
      return;
    auto code = *book_->fail_next;
    book_->fail_next.reset();
    throw storage::store_error(code, "the database said no");
  }

  std::shared_ptr<order_book> book_;
};

class WriterCore : public ::testing::Test {
protected:
  /// A core committing `commit_batch` requests at most, `delay_ms` after a
  /// group's first request.
  std::unique_ptr<actors::writer_core> core_with(int commit_batch,
                                                 int delay_ms) {
    actors::writer_setup setup;
    setup.commit_batch = commit_batch;
    setup.commit_delay_ms = delay_ms;
    setup.clock = [] { return storage::millis{1'000}; };
    setup.metrics = metrics_;
    return std::make_unique<actors::writer_core>(
        setup, std::make_unique<memory_order_store>(book_));
  }

  static storage::order_request order(std::string sku, std::int64_t qty = 1,
                                      std::optional<std::string> key = {}) {
    storage::order_request r;
    r.request_id = std::move(key);
    r.sku = std::move(sku);
    r.qty = qty;
    return r;
  }

  std::shared_ptr<order_book> book_ = std::make_shared<order_book>();
  std::shared_ptr<metrics::run_metrics> metrics_ =
      std::make_shared<metrics::run_metrics>();
};

TEST_F(WriterCore, TheFirstRequestPlansACommitAfterTheDelayTheRestWait) {
  auto core = core_with(100, 5);
  auto first = core->join_order(order("apple"));
  ASSERT_FALSE(first.refusal);
  EXPECT_EQ(first.plan.at, commit_plan::when::after_delay);
  EXPECT_EQ(first.plan.delay_ms, 5);
  EXPECT_TRUE(core->is_current(first.plan.generation));
  EXPECT_EQ(core->join_order(order("pear")).plan.at,
            commit_plan::when::planned);
  EXPECT_TRUE(book_->order_groups.empty()) << "nothing commits before it";
}

TEST_F(WriterCore, WithoutADelayTheCommitQueuesBehindTheMailbox) {
  auto core = core_with(100, 0);
  EXPECT_EQ(core->join_order(order("apple")).plan.at,
            commit_plan::when::after_mailbox);
}

TEST_F(WriterCore, AFullGroupCommitsNowAndAnOlderPlanGoesStale) {
  auto core = core_with(3, 5);
  auto planned = core->join_order(order("apple")).plan;
  core->join_order(order("pear"));
  EXPECT_EQ(core->join_order(order("plum")).plan.at, commit_plan::when::now);
  auto answers = core->commit();
  ASSERT_EQ(answers.orders.size(), 3u);
  for (const auto& a : answers.orders)
    EXPECT_TRUE(a.ok()) << a.detail;
  EXPECT_EQ(book_->order_groups, std::vector<std::size_t>{3});
  EXPECT_FALSE(core->is_current(planned.generation));
  EXPECT_EQ(metrics_->orders_placed.load(), 3);
  EXPECT_EQ(metrics_->commits.load(), 1);
  // The next request starts a new group with a plan of its own.
  EXPECT_EQ(core->join_order(order("fig")).plan.at,
            commit_plan::when::after_delay);
}

TEST_F(WriterCore, AnInvalidRequestIsRefusedAtOnceAndJoinsNoGroup) {
  auto core = core_with(100, 5);
  auto bad = core->join_order(order("apple", 0));
  ASSERT_TRUE(bad.refusal);
  EXPECT_NE(bad.refusal->find("qty"), std::string::npos) << *bad.refusal;
  auto event = core->join_event({"order-1", "OrderPaid", "not json"});
  EXPECT_TRUE(event.refusal);
  auto answers = core->commit();
  EXPECT_TRUE(answers.orders.empty());
  EXPECT_TRUE(answers.events.empty());
  EXPECT_TRUE(book_->order_groups.empty());
}

TEST_F(WriterCore, EachRequesterGetsItsOwnOutcomeInJoiningOrder) {
  auto core = core_with(100, 5);
  core->join_order(order("apple", 1, "k-1"));
  core->join_order(order("pear", 1, "clash-1"));
  core->join_order(order("apple", 1, "k-1"));
  core->join_event({"order-1", "OrderPaid", "{}"});
  auto answers = core->commit();
  ASSERT_EQ(answers.orders.size(), 3u);
  EXPECT_TRUE(answers.orders[0].ok());
  EXPECT_FALSE(answers.orders[0].receipt.replayed);
  EXPECT_EQ(answers.orders[1].error, ec::idempotency_conflict);
  EXPECT_EQ(answers.orders[1].detail, "clash-1");
  EXPECT_TRUE(answers.orders[2].receipt.replayed);
  EXPECT_TRUE(answers.orders[2].receipt.trace_id.empty());
  ASSERT_EQ(answers.events.size(), 1u);
  EXPECT_EQ(answers.events[0].receipt.aggregate_id, "order-1");
  EXPECT_EQ(metrics_->orders_conflicted.load(), 1);
  EXPECT_EQ(metrics_->orders_replayed.load(), 1);
  EXPECT_EQ(metrics_->events_appended.load(), 1);
}

TEST_F(WriterCore, AFailedGroupRefusesEveryRequesterWithTheStoresCode) {
  auto core = core_with(100, 5);
  book_->fail_next = storage::store_errc::busy;
  core->join_order(order("apple"));
  core->join_order(order("pear"));
  auto answers = core->commit();
  ASSERT_EQ(answers.orders.size(), 2u);
  for (const auto& a : answers.orders) {
    EXPECT_EQ(a.error, ec::store_busy);
    EXPECT_EQ(a.detail, "the database said no");
  }
  EXPECT_EQ(metrics_->writer_errors.load(), 1);
  // The requesters send again: the next group goes through.
  core->join_order(order("apple"));
  EXPECT_TRUE(core->commit().orders.front().ok());
}

TEST_F(WriterCore, ALostCommitAsksForTheSameTicketsAgain) {
  auto core = core_with(100, 5);
  book_->fail_next = storage::store_errc::outcome_unknown;
  core->join_order(order("apple", 1, "k-7"));
  EXPECT_EQ(core->commit().orders.front().error, ec::store_outcome_unknown);
  // The retry finds its first attempt committed: a replay, but an order
  // this run placed.
  core->join_order(order("apple", 1, "k-7"), true);
  book_->keys.insert("k-7");
  auto retried = core->commit().orders.front();
  EXPECT_TRUE(retried.receipt.replayed);
  EXPECT_EQ(metrics_->orders_placed.load(), 1);
  EXPECT_EQ(metrics_->orders_replayed.load(), 0);
  EXPECT_EQ(metrics_->unknown_found_committed.load(), 1);
}

TEST_F(WriterCore, OrdersAndFollowUpsCommitAsTwoGroupsOfOneCommit) {
  auto core = core_with(100, 5);
  core->join_event({"order-1", "OrderPaid", "{}"});
  core->join_order(order("apple"));
  core->join_event({"order-1", "OrderShipped", "{}"});
  auto answers = core->commit();
  EXPECT_EQ(answers.orders.size(), 1u);
  EXPECT_EQ(answers.events.size(), 2u);
  EXPECT_EQ(book_->order_groups, std::vector<std::size_t>{1});
  EXPECT_EQ(book_->event_groups, std::vector<std::size_t>{2});
  EXPECT_EQ(metrics_->commits.load(), 1);
}

} // namespace
} // namespace outbox::test
