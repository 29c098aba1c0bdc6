#include "actors/relay.hpp"

#include "storage/types.hpp"
#include "tests/actors/actor_fixture.hpp"

#include <SQLiteCpp/Database.h>

#include <algorithm>
#include <string>

// A database outage between a relay's publish and its ack (or its
// hand-back of a batch Redis did not take) charges no row an attempt: the
// relay keeps what the database did not take and settles it before it
// claims again. The outage here is the database's write lock held by
// another connection past the relay's busy timeout, as a crashed or
// unreachable PostgreSQL is to its relays: the store throws, nothing moved.

using namespace outbox;
using outbox::test::actor_fixture;

namespace {

class ActorRelayDatabaseOutage : public actor_fixture {
protected:
  /// A relay that gives up on the lock after 10 ms instead of 5 s, and
  /// tries again after `retry_ms` (its first idle poll).
  caf::actor spawn_impatient_relay(const std::string& name, int retry_ms = 10) {
    auto setup = relay_config(name);
    setup.db.busy_timeout_ms = 10;
    setup.poll_interval_ms = retry_ms;
    setup.idle_poll_max_ms = std::max(retry_ms, setup.idle_poll_max_ms);
    return spawn_relay(setup);
  }

  /// The next publish call takes the database's write lock first, so
  /// whatever the relay writes after it meets the outage.
  void lock_database_at_next_publish() {
    broker_->on_publish = [this] {
      broker_->on_publish = nullptr;
      db_->exec("BEGIN IMMEDIATE");
    };
  }

  void end_outage() { db_->exec("ROLLBACK"); }

  /// `event_id` went out once and was charged once: by the claim that
  /// published it, nothing taken over.
  void expect_published_once(const std::string& event_id) {
    EXPECT_EQ(status_of(event_id), "PUBLISHED");
    EXPECT_EQ(attempts_of(event_id), 1);
    EXPECT_EQ(broker_->times_published(event_id), 1u);
    EXPECT_EQ(metrics_->lease_takeovers.load(), 0);
  }
};

TEST_F(ActorRelayDatabaseOutage, AnAckTheDatabaseMissedIsRetriedNotCharged) {
  auto order = place_order("apple", 1);
  lock_database_at_next_publish();
  spawn_impatient_relay("relay-a");
  run();
  // Redis took the row; the ack met the lock.
  ASSERT_EQ(broker_->times_published(order.event_id), 1u);
  EXPECT_EQ(metrics_->acked.load(), 0);
  EXPECT_GE(metrics_->outage_retries.load(), 1);
  end_outage();
  EXPECT_EQ(status_of(order.event_id), "SENDING");

  // Back past the lease: nobody took the row over, so the fenced ack still
  // holds, and it comes before any new claim.
  advance(policy_.ttl * 2);
  expect_published_once(order.event_id);
  EXPECT_EQ(metrics_->acked.load(), 1);
  EXPECT_EQ(metrics_->fenced_acks_rejected.load(), 0);
}

TEST_F(ActorRelayDatabaseOutage, AHandBackTheDatabaseMissedIsRetried) {
  auto order = place_order("apple", 1);
  // Redis and the database away at once: the rows cannot be published, and
  // the release that refunds their attempt cannot be written either.
  lock_database_at_next_publish();
  broker_->fail_publishes(1, broker::broker_errc::unavailable);
  spawn_impatient_relay("relay-a");
  run();
  EXPECT_TRUE(broker_->batches.empty());
  EXPECT_EQ(metrics_->released.load(), 0);
  end_outage();
  EXPECT_EQ(status_of(order.event_id), "SENDING");

  advance(policy_.ttl * 2);
  // The first claim's attempt was refunded by the late release.
  expect_published_once(order.event_id);
  EXPECT_EQ(metrics_->released.load(), 1);
}

TEST_F(ActorRelayDatabaseOutage, ARefusalTheDatabaseMissedAcksWhatWasPushed) {
  auto good = place_order("apple", 1);
  auto bad = place_order("pear", 1);
  // Redis refuses one row of the batch: the relay pushes the others one
  // at a time, then charges the refused row, which meets the outage.
  broker_->poisoned_events.insert(bad.event_id);
  lock_database_at_next_publish();
  spawn_impatient_relay("relay-a");
  run();
  ASSERT_EQ(broker_->times_published(good.event_id), 1u);
  EXPECT_EQ(metrics_->acked.load(), 0);
  end_outage();

  advance(policy_.ttl * 2);
  expect_published_once(good.event_id);
  // The refused row was handed back, then refused and charged again.
  EXPECT_NE(last_error_of(bad.event_id), "");
}

TEST_F(ActorRelayDatabaseOutage, AnAckTakenOverMeanwhileIsFenced) {
  auto order = place_order("apple", 1);
  lock_database_at_next_publish();
  auto a = spawn_impatient_relay("relay-a", policy_.ttl * 2);
  run();
  end_outage();
  // A's backoff outlasts the lease: B takes the row over and publishes it
  // again (the inbox absorbs that), then A's late ack must not land.
  auto b_metrics = std::make_shared<metrics::run_metrics>();
  spawn_relay(relay_config("relay-b", {}, b_metrics));
  ASSERT_EQ(advance_until_status(order.event_id, "PUBLISHED", 15), "PUBLISHED");
  EXPECT_EQ(b_metrics->lease_takeovers.load(), 1);
  advance(policy_.ttl * 2);
  EXPECT_EQ(broker_->times_published(order.event_id), 2u);
  EXPECT_EQ(metrics_->fenced_acks_rejected.load(), 1);
  EXPECT_EQ(metrics_->acked.load(), 0);
  EXPECT_EQ(b_metrics->acked.load(), 1);
  shut_down(a);
}

TEST_F(ActorRelayDatabaseOutage, AGracefulStopSettlesWhatItStillOwes) {
  auto order = place_order("apple", 1);
  lock_database_at_next_publish();
  auto a = spawn_impatient_relay("relay-a");
  run();
  end_outage();
  EXPECT_EQ(status_of(order.event_id), "SENDING");
  shut_down(a);
  EXPECT_EQ(status_of(order.event_id), "PUBLISHED");
  EXPECT_EQ(attempts_of(order.event_id), 1);
}

} // namespace
