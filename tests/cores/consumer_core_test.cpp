#include "actors/consumer_core.hpp"

#include "broker/entry.hpp"
#include "broker/keys.hpp"
#include "metrics/run_metrics.hpp"
#include "tests/actors/fakes.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

// A consumer's decisions without an actor: what comes after a batch, an
// empty queue, an outage, the fence or a crash. No CAF here: the core is
// plain C++ over a consume_port, here the in-memory fake broker's.

namespace outbox::test {
namespace {

using consumer_step = actors::consumer_next::what;

class ConsumerCore : public ::testing::Test {
protected:
  actors::consumer_setup setup_for(std::vector<std::string> queues,
                                   int burst = 256) {
    actors::consumer_setup setup;
    setup.name = "c-1";
    setup.names.queue = broker_->queue;
    setup.queues = std::move(queues);
    setup.burst = burst;
    setup.make_port = fake_consume_port_factory(broker_);
    setup.clock = [] { return storage::millis{5'000}; };
    setup.metrics = metrics_;
    return setup;
  }

  /// A started core consuming `queues` (the fake broker's queue if none).
  std::unique_ptr<actors::consumer_core>
  started(std::vector<std::string> queues = {}, int burst = 256,
          config::crash_settings crash = {}) {
    if (queues.empty())
      queues.push_back(broker_->queue);
    auto setup = setup_for(std::move(queues), burst);
    setup.crash = crash;
    auto core = std::make_unique<actors::consumer_core>(std::move(setup));
    EXPECT_EQ(core->start().result, actors::consumer_start::how::consuming);
    return core;
  }

  /// Events 1..last of order `aggregate_id` (the first an OrderPlaced of
  /// one apple) pushed onto `queue`.
  void enqueue(const std::string& queue, const std::string& aggregate_id,
               std::int64_t last) {
    for (std::int64_t seq = 1; seq <= last; ++seq) {
      broker::event_entry entry;
      entry.event_id = aggregate_id + "#" + std::to_string(seq);
      entry.aggregate_id = aggregate_id;
      entry.seq = seq;
      entry.event_type = seq == 1 ? "OrderPlaced" : "OrderPaid";
      entry.payload =
          seq == 1 ? nlohmann::json{{"sku", "apple"}, {"qty", 1}}.dump() : "{}";
      entry.committed_at = 4'000;
      broker_->lists[queue].push_back(broker::encode(entry));
    }
  }

  std::string processing(const std::string& queue) const {
    broker::keys names;
    names.queue = broker_->queue;
    return names.processing_for(queue, "c-1");
  }

  std::shared_ptr<fake_broker> broker_ = std::make_shared<fake_broker>();
  std::shared_ptr<metrics::run_metrics> metrics_ =
      std::make_shared<metrics::run_metrics>();
};

TEST_F(ConsumerCore, ABatchGoesThroughThenAnEmptyQueueWaitsAMoment) {
  auto core = started();
  enqueue(broker_->queue, "order-1", 3);
  EXPECT_EQ(core->step().next, consumer_step::step_now);
  EXPECT_EQ(broker_->consumed, 3);
  EXPECT_EQ(metrics_->applied.load(), 3);
  EXPECT_TRUE(broker_->lists[processing(broker_->queue)].empty());
  auto idle = core->step();
  EXPECT_EQ(idle.next, consumer_step::step_later);
  EXPECT_EQ(idle.delay_ms, 1);
}

TEST_F(ConsumerCore, RedisTroubleBacksOffDoublingAndTheBatchIsRetried) {
  auto core = started();
  enqueue(broker_->queue, "order-1", 2);
  broker_->fail_applies = 3;
  std::vector<int> delays;
  for (int i = 0; i < 3; ++i) {
    auto next = core->step();
    ASSERT_EQ(next.next, consumer_step::step_later);
    delays.push_back(next.delay_ms);
  }
  EXPECT_EQ(delays, (std::vector<int>{50, 100, 200}));
  EXPECT_EQ(broker_->consumed, 0);
  // The failed batch waits in the processing list; the next step puts it
  // back at the queue's head first, then applies it.
  EXPECT_EQ(broker_->lists[processing(broker_->queue)].size(), 2u);
  EXPECT_EQ(core->step().next, consumer_step::step_now);
  EXPECT_EQ(broker_->consumed, 2);
  EXPECT_EQ(metrics_->consumer_errors.load(), 3);
  EXPECT_EQ(metrics_->recovered_entries.load(), 6);
  // Redis answered: the next outage backs off from the start again.
  broker_->fail_pops = 1;
  enqueue(broker_->queue, "order-2", 1);
  EXPECT_EQ(core->step().delay_ms, 50);
}

TEST_F(ConsumerCore, TheBackoffStopsGrowingAtTwoSeconds) {
  auto core = started();
  enqueue(broker_->queue, "order-1", 1);
  broker_->fail_pops = 8;
  std::vector<int> delays;
  for (int i = 0; i < 8; ++i)
    delays.push_back(core->step().delay_ms);
  EXPECT_EQ(delays,
            (std::vector<int>{50, 100, 200, 400, 800, 1600, 2000, 2000}));
}

TEST_F(ConsumerCore, TheFenceStopsItForGood) {
  auto core = started();
  enqueue(broker_->queue, "order-1", 1);
  broker_->fenced = true;
  auto next = core->step();
  EXPECT_EQ(next.next, consumer_step::stop);
  EXPECT_EQ(next.reason, actors::ec::consumer_fenced);
  EXPECT_EQ(metrics_->fenced_moves_refused.load(), 1);
  EXPECT_EQ(broker_->consumed, 0);
}

TEST_F(ConsumerCore, AnInjectedCrashStopsItLeavingTheBatchInFlight) {
  config::crash_settings crash;
  crash.consumer_after_pop = 1.0;
  auto core = started({}, 256, crash);
  enqueue(broker_->queue, "order-1", 2);
  auto next = core->step();
  EXPECT_EQ(next.next, consumer_step::stop);
  EXPECT_EQ(next.reason, actors::ec::injected_crash);
  EXPECT_EQ(metrics_->injected_crashes.load(), 1);
  EXPECT_EQ(broker_->consumed, 0);
  EXPECT_EQ(broker_->lists[processing(broker_->queue)].size(), 2u);
}

TEST_F(ConsumerCore, ItsQueuesTakeTurns) {
  auto core = started({"q-a", "q-b"}, 1);
  enqueue("q-a", "order-1", 2);
  enqueue("q-b", "order-2", 2);
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(core->step().next, consumer_step::step_now);
  // One entry a batch, a queue at a time: q-a, q-b, q-a.
  EXPECT_TRUE(broker_->lists["q-a"].empty());
  EXPECT_EQ(broker_->lists["q-b"].size(), 1u);
}

TEST_F(ConsumerCore, OwningNoPartitionItStaysIdle) {
  actors::consumer_core core{setup_for({})};
  EXPECT_EQ(core.start().result, actors::consumer_start::how::idle);
}

TEST_F(ConsumerCore, APortThatCannotOpenFailsItsStartSayingWhy) {
  auto setup = setup_for({broker_->queue});
  setup.make_port = []() -> std::unique_ptr<actors::consume_port> {
    throw std::runtime_error("no Redis here");
  };
  actors::consumer_core core{std::move(setup)};
  auto start = core.start();
  EXPECT_EQ(start.result, actors::consumer_start::how::failed);
  EXPECT_EQ(start.why, "no Redis here");
}

} // namespace
} // namespace outbox::test
