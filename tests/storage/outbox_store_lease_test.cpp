#include "storage/store_error.hpp"
#include "tests/storage/outbox_store_fixture.hpp"

// The lease fence: an ack, renew, release or fail counts only from the owner
// at the current epoch, so a relay whose lease was taken over changes nothing.

using namespace outbox::storage;
using StorageOutboxStore = outbox::test::outbox_store_fixture;

TEST_P(StorageOutboxStore, ExpiredLeaseIsTakenOverAndTheOldAckFenced) {
  auto event_id = append("a");
  auto first = outbox_.claim_batch("relay-1", 0, policy_);
  ASSERT_EQ(1u, first.events.size());
  EXPECT_TRUE(outbox_.claim_batch("relay-2", 9, policy_).events.empty())
      << "the lease is valid until 10";
  auto second = outbox_.claim_batch("relay-2", 10, policy_);
  ASSERT_EQ(1u, second.events.size());
  EXPECT_EQ(1, second.taken_over);
  EXPECT_TRUE(second.events[0].taken_over);
  EXPECT_EQ(2, second.events[0].epoch);
  EXPECT_EQ(2, second.events[0].attempts);
  auto stale = outbox_.ack("relay-1", first.leases(), 11);
  EXPECT_EQ(0, stale.acked);
  EXPECT_EQ((strings{event_id}), stale.rejected);
  EXPECT_EQ("SENDING", column(event_id, "status"));
  // Same owner, stale epoch: still rejected.
  EXPECT_EQ(0, outbox_.ack("relay-2", first.leases(), 11).acked);
  auto current = outbox_.ack("relay-2", second.leases(), 12);
  EXPECT_EQ(1, current.acked);
  EXPECT_TRUE(current.rejected.empty());
  EXPECT_EQ("PUBLISHED", column(event_id, "status"));
  EXPECT_EQ("NULL", column(event_id, "owner"));
  EXPECT_EQ("12", column(event_id, "published_at"));
  // Acknowledged twice: the second is rejected, the row stays published.
  EXPECT_EQ(0, outbox_.ack("relay-2", second.leases(), 13).acked);
  EXPECT_TRUE(outbox_.claim_batch("relay-3", 100, policy_).events.empty());
}

TEST_P(StorageOutboxStore, RenewExtendsHeldLeasesOnly) {
  append("a");
  auto held = outbox_.claim_batch("relay-1", 0, policy_);
  EXPECT_EQ(1, outbox_.renew("relay-1", held.leases(), 100));
  EXPECT_EQ(0, outbox_.renew("relay-2", held.leases(), 1000));
  EXPECT_TRUE(outbox_.claim_batch("relay-2", 50, policy_).events.empty());
  auto taken = outbox_.claim_batch("relay-2", 100, policy_);
  ASSERT_EQ(1u, taken.events.size());
  EXPECT_EQ(0, outbox_.renew("relay-1", held.leases(), 1000))
      << "a lease taken over cannot be renewed";
}

TEST_P(StorageOutboxStore, ReleaseMakesRowsClaimableAtOnce) {
  auto event_id = append("a");
  append("a");
  auto held = outbox_.claim_batch("relay-1", 0, policy_);
  ASSERT_EQ(2u, held.events.size());
  EXPECT_EQ(2, outbox_.release("relay-1", held.leases()));
  EXPECT_EQ("PENDING", column(event_id, "status"));
  EXPECT_EQ("NULL", column(event_id, "owner"));
  EXPECT_EQ("0", column(event_id, "attempts")) << "the attempt is refunded";
  auto again = outbox_.claim_batch("relay-2", 0, policy_);
  EXPECT_EQ((strings{"a:1", "a:2"}), keys(again));
  EXPECT_EQ(1, again.events[0].attempts);
  EXPECT_EQ(2, again.events[0].epoch);
  EXPECT_EQ(0, outbox_.release("relay-1", held.leases()))
      << "rows no longer held are not touched";
}

TEST_P(StorageOutboxStore, LeasesCarryTheRowidAndAckByItKeepsTheFence) {
  auto first_id = append("a");
  auto second_id = append("b");
  auto c = outbox_.claim_batch("relay-1", 0, policy_);
  auto leases = c.leases();
  ASSERT_EQ(2u, leases.size());
  EXPECT_EQ(scalar("SELECT " + sql_->rowid() +
                   " FROM outbox WHERE event_id = '" + first_id + "'"),
            leases[0].rowid);
  EXPECT_EQ(c.events[1].rowid, leases[1].rowid);
  // Another owner, or a stale or future epoch: rejected though the rowid
  // points at the row.
  EXPECT_EQ(0, outbox_.ack("relay-2", {leases[0]}, 1).acked);
  auto wrong_epoch = leases[0];
  wrong_epoch.epoch = 0;
  EXPECT_EQ(0, outbox_.ack("relay-1", {wrong_epoch}, 1).acked);
  wrong_epoch.epoch = 2;
  EXPECT_EQ(0, outbox_.ack("relay-1", {wrong_epoch}, 1).acked);
  EXPECT_EQ(0, outbox_.renew("relay-2", {leases[0]}, 1000));
  EXPECT_EQ(0, outbox_.release("relay-2", {leases[0]}));
  EXPECT_EQ(1, outbox_.fail("relay-2", {leases[0]}, "x", 1, policy_).not_held);
  EXPECT_EQ("SENDING", column(first_id, "status"));
  // A rowid naming another row held by the same owner at the same epoch
  // does not acknowledge that row: the event_id decides.
  auto misdirected = leases[0];
  misdirected.rowid = leases[1].rowid;
  auto result = outbox_.ack("relay-1", {misdirected}, 2);
  EXPECT_EQ(1, result.acked);
  EXPECT_EQ("PUBLISHED", column(first_id, "status"));
  EXPECT_EQ("SENDING", column(second_id, "status"));
  // Leases without a rowid (built from event_id and epoch) still work.
  EXPECT_EQ(1, outbox_.ack("relay-1", {{second_id, 1}}, 3).acked);
  EXPECT_EQ("PUBLISHED", column(second_id, "status"));
  EXPECT_EQ(0, outbox_.ack("relay-1", {{second_id, 1}}, 4).acked);
  EXPECT_EQ(0, outbox_.ack("relay-1", {{"no-such-event", 1, 12345}}, 4).acked);
}

TEST_P(StorageOutboxStore, RejectsABadOwnerOrPolicy) {
  EXPECT_THROW(outbox_.claim_batch("", 0, policy_), store_error);
  for (auto broken : {&lease_policy::ttl, &lease_policy::backoff_base}) {
    auto policy = policy_;
    policy.*broken = -1;
    EXPECT_THROW(outbox_.claim_batch("relay-1", 0, policy), store_error);
  }
  auto policy = policy_;
  policy.batch = 0;
  try {
    outbox_.claim_batch("relay-1", 0, policy);
    FAIL();
  } catch (const store_error& e) {
    EXPECT_EQ(store_errc::invalid_input, e.code());
    EXPECT_EQ("lease policy: batch must be at least 1 (got 0)",
              std::string{e.what()});
  }
}
