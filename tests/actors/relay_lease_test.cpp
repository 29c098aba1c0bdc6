#include "actors/relay.hpp"

#include "storage/types.hpp"
#include "tests/actors/actor_fixture.hpp"

#include <map>
#include <string>
#include <vector>

// Relays that crash, freeze past their lease or shut down while holding
// leases: takeover after the ttl, duplicates absorbed by the inbox, the
// fence against zombies, and release on graceful shutdown.

using namespace outbox;
using outbox::test::actor_fixture;
using outbox::test::crash_at;
using outbox::test::has_code;

namespace {

using ActorRelayLease = actor_fixture;
using ActorRelayShutdown = actor_fixture;
using actors::crash_point;

TEST_F(ActorRelayLease, CrashedRelaysLeasesAreTakenOverAfterTheTtl) {
  auto first = place_order("apple", 1);
  auto second = place_order("pear", 1);
  auto follow_up = append(first.aggregate_id, "OrderPaid");
  std::vector<std::string> ids{first.event_id, second.event_id,
                               follow_up.event_id};
  auto claimed_at = now();

  auto a = spawn_relay(
      relay_config("relay-a", crash_at(crash_point::relay_after_claim)));
  auto a_exit = watch(a);
  run();
  ASSERT_TRUE(a_exit->exited);
  EXPECT_TRUE(has_code(a_exit->reason, actors::ec::injected_crash))
      << sys_.render(a_exit->reason);
  EXPECT_EQ(metrics_->injected_crashes.load(), 1);
  EXPECT_TRUE(broker_->batches.empty());
  for (const auto& id : ids) {
    EXPECT_EQ(status_of(id),
              storage::row_status_text(storage::row_status::sending));
    EXPECT_EQ(owner_of(id), "relay-a");
  }

  auto b_metrics = std::make_shared<metrics::run_metrics>();
  auto b = spawn_relay(relay_config("relay-b", {}, b_metrics));
  run();
  // Until the lease runs out (lease_until = claim time + ttl), B's polls and
  // a nudge at the last millisecond find nothing.
  advance(policy_.ttl - 1);
  nudge(b);
  run();
  EXPECT_EQ(now(), claimed_at + policy_.ttl - 1);
  EXPECT_GT(b_metrics->claims.load(), 1);
  EXPECT_EQ(b_metrics->claimed_rows.load(), 0);
  EXPECT_TRUE(broker_->batches.empty());
  for (const auto& id : ids)
    EXPECT_EQ(owner_of(id), "relay-a");

  advance(1, 1);
  nudge(b);
  run();
  EXPECT_EQ(b_metrics->lease_takeovers.load(), 3);
  EXPECT_EQ(b_metrics->acked.load(), 3);
  EXPECT_EQ(broker_->published().size(), 3u);
  EXPECT_EQ(broker_->seqs_of(first.aggregate_id),
            (std::vector<std::int64_t>{1, 2}));
  for (const auto& id : ids) {
    EXPECT_EQ(status_of(id),
              storage::row_status_text(storage::row_status::published));
    EXPECT_EQ(attempts_of(id), 2) << "A's claim counts as an attempt";
  }
}

TEST_F(ActorRelayLease, CrashAfterPublishDuplicatesAreAbsorbedByTheInbox) {
  auto first = place_order("apple", 2);
  auto second = place_order("pear", 5);
  auto third = place_order("apple", 1);
  auto follow_up = append(first.aggregate_id, "OrderPaid");
  std::vector<std::string> ids{first.event_id, second.event_id, third.event_id,
                               follow_up.event_id};

  auto a = spawn_relay(
      relay_config("relay-a", crash_at(crash_point::relay_after_publish)));
  auto a_exit = watch(a);
  run();
  ASSERT_TRUE(a_exit->exited);
  EXPECT_TRUE(has_code(a_exit->reason, actors::ec::injected_crash));
  EXPECT_EQ(broker_->published().size(), 4u);
  EXPECT_EQ(metrics_->acked.load(), 0);
  for (const auto& id : ids)
    EXPECT_EQ(status_of(id),
              storage::row_status_text(storage::row_status::sending));

  spawn_relay(relay_config("relay-b"));
  advance(policy_.ttl + 200);
  for (const auto& id : ids) {
    EXPECT_EQ(status_of(id),
              storage::row_status_text(storage::row_status::published));
    EXPECT_EQ(broker_->times_published(id), 2u) << id;
  }
  EXPECT_EQ(metrics_->lease_takeovers.load(), 4);

  // Both deliveries of every event go through the inbox.
  test::fake_consume_port port{broker_};
  const std::string processing = "outbox.processing.c1";
  int applied = 0;
  int duplicates = 0;
  for (auto batch = port.pop_batch(broker_->queue, processing, 1, 1 << 20);
       !batch.empty();
       batch = port.pop_batch(broker_->queue, processing, 1, 1 << 20)) {
    auto result = port.apply(batch.front());
    applied += result.result == broker::applied_entry::outcome::applied;
    duplicates += result.result == broker::applied_entry::outcome::duplicate;
    EXPECT_FALSE(result.order_violation);
    port.remove(processing, batch.front());
  }
  EXPECT_EQ(applied, 4);
  EXPECT_EQ(duplicates, 4);
  EXPECT_EQ(broker_->processed.size(), 4u);
  EXPECT_EQ(broker_->consumed, 4);
  EXPECT_EQ(broker_->duplicates, 4);
  EXPECT_EQ(broker_->order_violations, 0);
  EXPECT_EQ(broker_->reserved,
            (std::map<std::string, std::int64_t>{{"apple", 3}, {"pear", 5}}));
  EXPECT_TRUE(broker_->lists[processing].empty());
}

TEST_F(ActorRelayLease, ABatchWhoseLeaseRanOutBeforeThePushIsDropped) {
  auto first = place_order("apple", 1);
  auto second = place_order("pear", 1);
  // The relay's own clock jumps a ttl between its claim and its push (a
  // process frozen there), while the wall clock, which the lease rows use,
  // stands still: only the monotonic check can see it.
  auto setup = relay_config("relay-a");
  auto calls = std::make_shared<int>(0);
  setup.monotonic = [calls, ttl = policy_.ttl] {
    return (*calls)++ == 0 ? storage::millis{0} : ttl;
  };
  spawn_relay(std::move(setup));
  run();
  EXPECT_EQ(metrics_->expired_leases_dropped.load(), 2);
  // Released without an attempt spent, claimed again at once: one push in
  // all, of the second claim.
  ASSERT_EQ(broker_->batches.size(), 1u) << "pushed on a lapsed lease";
  EXPECT_EQ(broker_->batches.front().size(), 2u);
  for (const auto& id : {first.event_id, second.event_id}) {
    EXPECT_EQ(status_of(id),
              storage::row_status_text(storage::row_status::published));
    EXPECT_EQ(attempts_of(id), 1) << "the dropped claim was refunded";
  }
}

TEST_F(ActorRelayLease, ZombiesAckIsRejectedByTheFence) {
  auto first = place_order("apple", 1);
  auto second = place_order("pear", 1);
  std::vector<std::string> ids{first.event_id, second.event_id};

  auto a_metrics = std::make_shared<metrics::run_metrics>();
  auto a = spawn_relay(
      relay_config("relay-a", crash_at(crash_point::relay_pause), a_metrics));
  auto a_exit = watch(a);
  run();
  EXPECT_EQ(a_metrics->zombie_pauses.load(), 1);
  EXPECT_EQ(a_metrics->paused_batches.load(), 1) << "held while paused";
  EXPECT_TRUE(broker_->batches.empty());
  for (const auto& id : ids)
    EXPECT_EQ(owner_of(id), "relay-a");

  auto b_metrics = std::make_shared<metrics::run_metrics>();
  spawn_relay(relay_config("relay-b", {}, b_metrics));
  // Past the ttl, before A wakes up (1.5 x ttl after its claim).
  advance(policy_.ttl + 200);
  EXPECT_EQ(b_metrics->lease_takeovers.load(), 2);
  EXPECT_EQ(b_metrics->acked.load(), 2);
  std::map<std::string, std::int64_t> published_at;
  for (const auto& id : ids) {
    EXPECT_EQ(status_of(id),
              storage::row_status_text(storage::row_status::published));
    EXPECT_EQ(broker_->times_published(id), 1u);
    published_at[id] = published_at_of(id);
  }
  EXPECT_EQ(a_metrics->enqueued.load(), 0);

  advance(policy_.ttl / 2);
  EXPECT_FALSE(a_exit->exited);
  // A published its stale batch again (a duplicate for the inbox) ...
  EXPECT_EQ(a_metrics->enqueued.load(), 2);
  for (const auto& id : ids)
    EXPECT_EQ(broker_->times_published(id), 2u);
  EXPECT_EQ(a_metrics->paused_batches.load(), 0) << "published, let go";
  // ... but its ack was fenced off: B's PUBLISHED stands.
  EXPECT_EQ(a_metrics->fenced_acks_rejected.load(), 2);
  EXPECT_EQ(a_metrics->acked.load(), 0);
  for (const auto& id : ids) {
    EXPECT_EQ(status_of(id),
              storage::row_status_text(storage::row_status::published));
    EXPECT_EQ(published_at_of(id), published_at[id]);
  }
}

TEST_F(ActorRelayShutdown, GracefulShutdownOfAPausedRelayReleasesItsLeases) {
  auto first = place_order("apple", 1);
  auto second = place_order("pear", 1);
  std::vector<std::string> ids{first.event_id, second.event_id};

  auto a =
      spawn_relay(relay_config("relay-a", crash_at(crash_point::relay_pause)));
  auto a_exit = watch(a);
  run();
  EXPECT_EQ(metrics_->paused_batches.load(), 1);
  for (const auto& id : ids) {
    EXPECT_EQ(status_of(id),
              storage::row_status_text(storage::row_status::sending));
    EXPECT_EQ(attempts_of(id), 1);
  }

  shut_down(a);
  ASSERT_TRUE(a_exit->exited);
  EXPECT_TRUE(has_code(a_exit->reason, caf::exit_reason::user_shutdown))
      << sys_.render(a_exit->reason);
  EXPECT_EQ(metrics_->released.load(), 2);
  EXPECT_EQ(metrics_->paused_batches.load(), 0);
  for (const auto& id : ids) {
    EXPECT_EQ(status_of(id),
              storage::row_status_text(storage::row_status::pending));
    EXPECT_EQ(owner_of(id), "");
    EXPECT_EQ(attempts_of(id), 0);
  }

  // Another relay takes them at once, without waiting for the ttl.
  auto b_metrics = std::make_shared<metrics::run_metrics>();
  spawn_relay(relay_config("relay-b", {}, b_metrics));
  run();
  EXPECT_EQ(b_metrics->lease_takeovers.load(), 0);
  EXPECT_EQ(b_metrics->acked.load(), 2);
  EXPECT_EQ(broker_->published().size(), 2u);
  for (const auto& id : ids)
    EXPECT_EQ(status_of(id),
              storage::row_status_text(storage::row_status::published));
}

} // namespace
