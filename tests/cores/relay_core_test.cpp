#include "actors/relay_core.hpp"

#include "metrics/run_metrics.hpp"
#include "storage/sqlite/database.hpp"
#include "storage/sqlite/order_store.hpp"
#include "storage/types.hpp"
#include "support/temp_dir.hpp"
#include "tests/actors/fake_publish_port.hpp"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

// A relay's decisions without an actor: what comes after a full claim, an
// empty one, a Redis or database outage, a lease that ran out, a crash or
// a pause. No CAF here: the core is plain C++ over a real SQLite file and
// the in-memory fake broker's publish port.

namespace outbox::test {
namespace {

using relay_step = actors::relay_next::what;

/// An outbox row as the relay left it.
struct relay_row {
  std::string status;
  std::int64_t attempts = 0;
};

class RelayCore : public ::testing::Test {
protected:
  RelayCore()
      : db_(storage::sqlite::open_and_migrate(options_)), orders_(*db_) {}

  /// Batches of two, polls from 10 ms up to 100 ms, a 1 s lease; the
  /// relay's own clock is the manual wall clock.
  actors::relay_setup setup_for(config::crash_settings crash = {}) {
    storage::lease_policy lease;
    lease.ttl = 1000;
    lease.batch = 2;
    auto clock = [clock = clock_] { return *clock; };
    actors::relay_setup setup{"relay-1",
                              options_,
                              lease,
                              10,
                              100,
                              crash,
                              fake_publisher_factory(broker_),
                              clock,
                              metrics_};
    setup.monotonic = clock;
    return setup;
  }

  /// A started core on `setup`.
  std::unique_ptr<actors::relay_core> started(actors::relay_setup setup) {
    auto core = std::make_unique<actors::relay_core>(std::move(setup));
    EXPECT_TRUE(core->start().started);
    return core;
  }

  /// A started core on which the crash point `point` strikes every time.
  std::unique_ptr<actors::relay_core>
  striking(double config::crash_settings::*point) {
    config::crash_settings crash;
    crash.*point = 1.0;
    return started(setup_for(crash));
  }

  /// Places an order of one apple now; its OrderPlaced row's event id.
  std::string place() {
    return orders_.place_order({std::nullopt, "apple", 1}, *clock_).event_id;
  }

  relay_row row(const std::string& event_id) {
    SQLite::Statement query{
        *db_, "SELECT status, attempts FROM outbox WHERE event_id = ?"};
    query.bind(1, event_id);
    if (!query.executeStep())
      throw std::runtime_error("no outbox row " + event_id);
    return {query.getColumn(0).getString(), query.getColumn(1).getInt64()};
  }

  static std::string text_of(storage::row_status status) {
    return storage::row_status_text(status);
  }

  temp_dir dir_;
  storage::db_options options_ = [this] {
    storage::db_options options;
    options.path = dir_.file("outbox.db");
    options.synchronous = "NORMAL";
    return options;
  }();
  std::unique_ptr<SQLite::Database> db_;
  storage::sqlite::order_store orders_;
  std::shared_ptr<storage::millis> clock_ =
      std::make_shared<storage::millis>(1'700'000'000'000);
  std::shared_ptr<metrics::run_metrics> metrics_ =
      std::make_shared<metrics::run_metrics>();
  std::shared_ptr<fake_broker> broker_ = std::make_shared<fake_broker>();
};

TEST_F(RelayCore, AFullClaimClaimsAgainAtOnceAPartOneAfterThePollInterval) {
  auto first = place();
  auto second = place();
  auto third = place();
  auto core = started(setup_for());
  EXPECT_EQ(core->cycle().next, relay_step::claim_now);
  ASSERT_EQ(broker_->batches.size(), 1u);
  EXPECT_EQ(broker_->batches.front().size(), 2u);
  EXPECT_EQ(row(first).status, text_of(storage::row_status::published));
  EXPECT_EQ(row(second).status, text_of(storage::row_status::published));
  auto next = core->cycle();
  EXPECT_EQ(next.next, relay_step::claim_later);
  EXPECT_EQ(next.delay_ms, 10);
  EXPECT_EQ(row(third).status, text_of(storage::row_status::published));
  EXPECT_EQ(metrics_->acked.load(), 3);
}

TEST_F(RelayCore, AnEmptyClaimBacksOffDoublingUpToTheIdleMaximum) {
  auto core = started(setup_for());
  std::vector<int> delays;
  for (int i = 0; i < 6; ++i) {
    auto next = core->cycle();
    ASSERT_EQ(next.next, relay_step::claim_later);
    delays.push_back(next.delay_ms);
  }
  EXPECT_EQ(delays, (std::vector<int>{10, 20, 40, 80, 100, 100}));
  // A claim that finds rows ends the idle spell: the backoff starts over.
  place();
  EXPECT_EQ(core->cycle().delay_ms, 10);
  EXPECT_EQ(core->cycle().delay_ms, 10);
  EXPECT_EQ(core->cycle().delay_ms, 20);
}

TEST_F(RelayCore, ARedisOutageReleasesTheRowsUnchargedAndRetriesLater) {
  auto order = place();
  auto core = started(setup_for());
  broker_->fail_publishes(2, broker::broker_errc::unavailable);
  std::vector<int> delays;
  for (int i = 0; i < 2; ++i) {
    auto next = core->cycle();
    ASSERT_EQ(next.next, relay_step::claim_later);
    delays.push_back(next.delay_ms);
    EXPECT_EQ(row(order).status, text_of(storage::row_status::pending));
    EXPECT_EQ(row(order).attempts, 0) << "an outage charges no attempt";
  }
  // Rows were claimed each time: the idle spell never begins.
  EXPECT_EQ(delays, (std::vector<int>{10, 10}));
  EXPECT_EQ(metrics_->publish_errors.load(), 2);
  EXPECT_EQ(metrics_->outage_retries.load(), 2);
  EXPECT_EQ(metrics_->released.load(), 2);
  core->cycle();
  EXPECT_EQ(row(order).status, text_of(storage::row_status::published));
  EXPECT_EQ(row(order).attempts, 1);
}

TEST_F(RelayCore, ACrashAfterThePublishStopsItLeavingTheRowsSending) {
  auto order = place();
  auto next = striking(&config::crash_settings::relay_after_publish)->cycle();
  EXPECT_EQ(next.next, relay_step::stop);
  EXPECT_EQ(next.reason, actors::ec::injected_crash);
  EXPECT_EQ(broker_->times_published(order), 1u);
  EXPECT_EQ(row(order).status, text_of(storage::row_status::sending));
  EXPECT_EQ(metrics_->injected_crashes.load(), 1);
  EXPECT_EQ(metrics_->acked.load(), 0);
}

TEST_F(RelayCore, ALeaseRunOutByItsOwnClockIsNotPublishedButHandedBack) {
  auto order = place();
  // The relay's own clock jumps a ttl between its claim and its push (a
  // process frozen there); the wall clock, which the rows use, stands
  // still.
  auto setup = setup_for();
  auto reads = std::make_shared<int>(0);
  setup.monotonic = [reads, ttl = setup.lease.ttl] {
    return (*reads)++ == 0 ? storage::millis{0} : ttl;
  };
  auto core = started(std::move(setup));
  EXPECT_EQ(core->cycle().next, relay_step::claim_now);
  EXPECT_EQ(broker_->publish_calls, 0) << "pushed on a lapsed lease";
  EXPECT_EQ(row(order).status, text_of(storage::row_status::pending));
  EXPECT_EQ(row(order).attempts, 0) << "the dropped claim was refunded";
  EXPECT_EQ(metrics_->expired_leases_dropped.load(), 1);
}

TEST_F(RelayCore, AnAckTheDatabaseMissedIsKeptAndSettledOnTheNextCycle) {
  auto order = place();
  auto setup = setup_for();
  setup.db.busy_timeout_ms = 10;
  auto core = started(std::move(setup));
  // The database's write lock is taken as Redis takes the batch: the ack
  // meets the outage.
  broker_->on_publish = [this] {
    broker_->on_publish = nullptr;
    db_->exec("BEGIN IMMEDIATE");
  };
  auto next = core->cycle();
  EXPECT_EQ(next.next, relay_step::claim_later);
  EXPECT_EQ(next.delay_ms, 10);
  EXPECT_EQ(broker_->times_published(order), 1u);
  EXPECT_EQ(metrics_->acked.load(), 0);
  EXPECT_EQ(metrics_->outage_retries.load(), 1);
  db_->exec("ROLLBACK");
  EXPECT_EQ(row(order).status, text_of(storage::row_status::sending));

  // Settled before anything new is claimed, and charged once in all.
  core->cycle();
  EXPECT_EQ(row(order).status, text_of(storage::row_status::published));
  EXPECT_EQ(row(order).attempts, 1);
  EXPECT_EQ(broker_->times_published(order), 1u);
  EXPECT_EQ(metrics_->acked.load(), 1);
}

TEST_F(RelayCore, APauseHoldsTheBatchAndAShutdownHandsItBack) {
  auto order = place();
  auto core = striking(&config::crash_settings::relay_pause);
  auto next = core->cycle();
  EXPECT_EQ(next.next, relay_step::pause);
  EXPECT_GT(next.delay_ms, 1000) << "frozen past its lease";
  EXPECT_TRUE(core->paused());
  EXPECT_EQ(metrics_->paused_batches.load(), 1);
  EXPECT_EQ(row(order).status, text_of(storage::row_status::sending));
  core->shutdown();
  EXPECT_FALSE(core->paused());
  EXPECT_EQ(metrics_->paused_batches.load(), 0);
  EXPECT_EQ(row(order).status, text_of(storage::row_status::pending));
  EXPECT_FALSE(core->resume().has_value()) << "nothing held: nothing to resume";
}

TEST_F(RelayCore, APublisherThatCannotOpenFailsItsStartSayingWhy) {
  auto setup = setup_for();
  setup.make_publisher = []() -> std::unique_ptr<actors::publish_port> {
    throw std::runtime_error("no Redis here");
  };
  actors::relay_core core{std::move(setup)};
  auto start = core.start();
  EXPECT_FALSE(start.started);
  EXPECT_EQ(start.why, "no Redis here");
}

} // namespace
} // namespace outbox::test
