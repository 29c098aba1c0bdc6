#include "tests/storage/outbox_store_fixture.hpp"

#include <limits>
#include <map>
#include <optional>
#include <string>

// Rows that do not get through: backoff, FAILED after max_attempts (which
// blocks only its own aggregate), retry, and the stats that show them.

using namespace outbox::storage;
using StorageOutboxStore = outbox::test::outbox_store_fixture;

TEST_P(StorageOutboxStore, FailBacksOffThenFailsAndBlocksItsAggregate) {
  auto event_id = append("a");
  append("a");
  // Each round: a:1 fails to publish, a:2 (claimed with it) is handed back.
  auto round = [&](millis now, int attempts) {
    auto c = outbox_.claim_batch("relay-1", now, policy_);
    EXPECT_EQ((strings{"a:1", "a:2"}), keys(c));
    EXPECT_EQ(attempts, c.events.at(0).attempts);
    auto leases = c.leases();
    EXPECT_EQ(1, outbox_.release("relay-1", {leases.at(1)}));
    return outbox_.fail("relay-1", {leases.at(0)}, "redis down", now, policy_);
  };
  EXPECT_EQ(1, round(0, 1).backed_off);
  EXPECT_EQ("100", column(event_id, "available_at"));
  EXPECT_EQ("redis down", column(event_id, "last_error"));
  EXPECT_EQ("PENDING", column(event_id, "status"));
  EXPECT_TRUE(outbox_.claim_batch("relay-2", 99, policy_).events.empty())
      << "a:1 backs off and a:2 waits behind it";
  EXPECT_EQ(1, round(100, 2).backed_off);
  EXPECT_EQ("300", column(event_id, "available_at")) << "100 * 2^(2-1)";
  EXPECT_TRUE(outbox_.claim_batch("relay-2", 299, policy_).events.empty());
  auto last = round(300, 3);
  EXPECT_EQ(1, last.failed) << "the third claim reached max_attempts";
  EXPECT_EQ(0, last.backed_off);
  EXPECT_EQ("FAILED", column(event_id, "status"));
  EXPECT_EQ("NULL", column(event_id, "owner"));
  EXPECT_EQ("redis down", column(event_id, "last_error"));
  // The FAILED row blocks a:2 for ever, but only aggregate a.
  append("b");
  EXPECT_EQ((strings{"b:1"}),
            keys(outbox_.claim_batch("relay-2", 1'000'000, policy_)));
  EXPECT_EQ(
      1, outbox_.fail("relay-1", {{event_id, 3}}, "late", 0, policy_).not_held)
      << "a FAILED row is nobody's lease";
}

TEST_P(StorageOutboxStore, FailIgnoresRowsNoLongerHeld) {
  append("a");
  auto first = outbox_.claim_batch("relay-1", 0, policy_);
  outbox_.claim_batch("relay-2", 10, policy_); // takes it over
  auto result = outbox_.fail("relay-1", first.leases(), "timeout", 11, policy_);
  EXPECT_EQ(1, result.not_held);
  EXPECT_EQ(0, result.backed_off + result.failed);
  EXPECT_EQ("SENDING", column(first.events[0].event_id, "status"));
}

TEST_P(StorageOutboxStore, RowWhoseLeaseKeepsExpiringEndsFailed) {
  auto event_id = append("a");
  append("a");
  append("b");
  policy_.max_attempts = 2;
  // Each relay dies after its claim: nobody ever acks or fails.
  EXPECT_EQ((strings{"a:1", "a:2", "b:1"}),
            keys(outbox_.claim_batch("relay-1", 0, policy_)));
  auto second = outbox_.claim_batch("relay-2", 10, policy_);
  EXPECT_EQ(3, second.taken_over);
  EXPECT_EQ(2, second.events.at(0).attempts);
  outbox_.ack("relay-2", {second.leases().at(2)}, 11); // b:1 got through
  append("b");
  auto third = outbox_.claim_batch("relay-3", 20, policy_);
  EXPECT_EQ(1, third.failed) << "a:1 was claimed max_attempts times";
  EXPECT_EQ((strings{"b:2"}), keys(third)) << "a:2 waits behind a:1";
  EXPECT_EQ("FAILED", column(event_id, "status"));
  EXPECT_EQ("NULL", column(event_id, "owner"));
  EXPECT_NE(std::string::npos,
            column(event_id, "last_error").find("lease expired 2 times"));
  // Once retried, a:1 flows again; a:2 behind it was also claimed
  // max_attempts times, so it fails in turn instead of being taken.
  EXPECT_EQ(1, outbox_.retry_all_failed(25));
  auto after = outbox_.claim_batch("relay-4", 25, policy_);
  EXPECT_EQ((strings{"a:1"}), keys(after));
  EXPECT_EQ(1, after.failed);
}

TEST_P(StorageOutboxStore, FailedRowBlocksLaterRowsClaimedWithIt) {
  append_all({"a", "a"});
  policy_.max_attempts = 1;
  outbox_.claim_batch("relay-1", 0, policy_);
  // a:1 and a:2 both expire; a:1 fails, so a:2 must not be taken (it is not
  // failed either: it keeps its expired lease until a:1 is retried).
  auto later = outbox_.claim_batch("relay-2", 10, policy_);
  EXPECT_EQ(1, later.failed);
  EXPECT_TRUE(later.events.empty());
  EXPECT_EQ(1, scalar("SELECT COUNT(*) FROM outbox WHERE status = 'FAILED'"));
  EXPECT_EQ(1, outbox_.stats(10).expired_leases);
}

TEST_P(StorageOutboxStore, RetryPutsFailedRowsBack) {
  auto failed_id = append("a");
  append("a");
  auto pending_id = append("b");
  policy_.max_attempts = 1;
  auto c = outbox_.claim_batch("relay-1", 0, policy_);
  outbox_.fail("relay-1", {c.leases().at(0)}, "bad", 0, policy_);
  outbox_.release("relay-1", {c.leases().at(1), c.leases().at(2)});
  EXPECT_EQ("FAILED", column(failed_id, "status"));
  auto not_failed =
      outbox_.retry({failed_id, "no-such-event", pending_id, failed_id}, 500);
  EXPECT_EQ((strings{"no-such-event", pending_id}), not_failed);
  EXPECT_EQ("PENDING", column(failed_id, "status"));
  EXPECT_EQ("0", column(failed_id, "attempts"));
  EXPECT_EQ("500", column(failed_id, "available_at"));
  EXPECT_EQ("NULL", column(failed_id, "owner"));
  EXPECT_EQ((strings{"a:1", "a:2", "b:1"}),
            keys(outbox_.claim_batch("relay-1", 500, policy_)));
}

TEST_P(StorageOutboxStore, RetryAllFailedRetriesEveryFailedRow) {
  append_all({"a", "b", "c"});
  policy_.max_attempts = 1;
  auto c = outbox_.claim_batch("relay-1", 0, policy_);
  outbox_.fail("relay-1", {c.leases().at(0), c.leases().at(1)}, "bad", 0,
               policy_);
  EXPECT_EQ(2, outbox_.retry_all_failed(7));
  EXPECT_EQ(0, outbox_.retry_all_failed(8));
  EXPECT_EQ((strings{"a:1", "b:1"}),
            keys(outbox_.claim_batch("relay-2", 7, policy_)));
}

TEST_P(StorageOutboxStore, StatsCountsEveryStatusAndLease) {
  auto empty = outbox_.stats(0);
  EXPECT_EQ(
      (std::map<std::string, std::int64_t>{
          {"PENDING", 0}, {"SENDING", 0}, {"PUBLISHED", 0}, {"FAILED", 0}}),
      empty.by_status);
  EXPECT_EQ(0, empty.orders);
  EXPECT_EQ(0, empty.oldest_unpublished_age);
  orders_->place_order({std::nullopt, "SKU-1", 1}, 100); // order-1:1
  orders_->place_order({std::nullopt, "SKU-2", 1}, 200); // order-2:1
  // Named after the orders' aggregates so that their key order is their
  // age order: the claims below then take the same rows whether they go
  // oldest first (SQLite) or round the aggregates in key order
  // (PostgreSQL, docs/postgres-protocol.md, "Claim").
  append_all({"p-a", "p-b", "p-c"}); // created_at 0
  orders_->append_event({"p-d", "T", "{}"}, 300);
  policy_.max_attempts = 1;
  policy_.batch = 1;
  auto r1 = outbox_.claim_batch("relay-1", 1000, policy_); // order-1
  auto r2 = outbox_.claim_batch("relay-2", 1000, policy_); // order-2
  outbox_.ack("relay-2", r2.leases(), 1001);
  auto r3 = outbox_.claim_batch("relay-2", 1005, policy_); // p-a
  auto f = outbox_.claim_batch("relay-3", 1000, policy_);  // p-b
  outbox_.fail("relay-3", f.leases(), "boom", 1000, policy_);
  auto stats = outbox_.stats(1012);
  EXPECT_EQ(2, stats.by_status["PENDING"]); // p-c, p-d
  EXPECT_EQ(2, stats.by_status["SENDING"]); // order-1, p-a
  EXPECT_EQ(1, stats.by_status["PUBLISHED"]);
  EXPECT_EQ(1, stats.by_status["FAILED"]);
  EXPECT_EQ(2, stats.orders);
  EXPECT_EQ(1012, stats.oldest_unpublished_age) << "p-a and p-c: created at 0";
  EXPECT_EQ(1, stats.expired_leases) << "relay-1's lease ended at 1010";
  ASSERT_EQ(2u, stats.leases.size());
  EXPECT_EQ("relay-1", stats.leases[0].owner);
  EXPECT_EQ(1, stats.leases[0].rows);
  EXPECT_EQ(1010, stats.leases[0].earliest_expiry);
  EXPECT_EQ("relay-2", stats.leases[1].owner);
  EXPECT_EQ(1015, stats.leases[1].earliest_expiry);
  ASSERT_EQ(1u, stats.failed.size());
  EXPECT_EQ(f.events.at(0).event_id, stats.failed[0].event_id);
  EXPECT_EQ("p-b", stats.failed[0].aggregate_id);
  EXPECT_EQ(1, stats.failed[0].seq);
  EXPECT_EQ(1, stats.failed[0].attempts);
  EXPECT_EQ("boom", stats.failed[0].last_error);
  (void)r1;
  (void)r3;
}

// The drain rule's question: PENDING or SENDING rows, whatever FAILED or
// PUBLISHED rows there are.
TEST_P(StorageOutboxStore, HasPendingOrSendingIgnoresFailedAndPublished) {
  EXPECT_FALSE(outbox_.has_pending_or_sending());
  append_all({"a", "b"});
  EXPECT_TRUE(outbox_.has_pending_or_sending()) << "two PENDING";
  policy_.max_attempts = 1;
  policy_.batch = 1;
  auto a = outbox_.claim_batch("relay-1", 1000, policy_);
  auto b = outbox_.claim_batch("relay-2", 1000, policy_);
  ASSERT_EQ(1u, a.events.size());
  ASSERT_EQ(1u, b.events.size());
  EXPECT_TRUE(outbox_.has_pending_or_sending()) << "two SENDING";
  outbox_.ack("relay-1", a.leases(), 1001);
  EXPECT_TRUE(outbox_.has_pending_or_sending()) << "one SENDING";
  outbox_.fail("relay-2", b.leases(), "boom", 1001, policy_);
  EXPECT_FALSE(outbox_.has_pending_or_sending()) << "one PUBLISHED, one FAILED";
  EXPECT_EQ(1, outbox_.retry_all_failed(1002));
  EXPECT_TRUE(outbox_.has_pending_or_sending()) << "retried: PENDING";
}

TEST(StorageOutboxStoreBackoff, DoublesFromBaseUpToTheCap) {
  lease_policy policy;
  policy.backoff_base = 100;
  policy.backoff_max = 1000;
  EXPECT_EQ(100, backoff_delay(0, policy));
  EXPECT_EQ(100, backoff_delay(1, policy));
  EXPECT_EQ(200, backoff_delay(2, policy));
  EXPECT_EQ(400, backoff_delay(3, policy));
  EXPECT_EQ(800, backoff_delay(4, policy));
  EXPECT_EQ(1000, backoff_delay(5, policy));
  EXPECT_EQ(1000, backoff_delay(std::numeric_limits<int>::max(), policy));
  policy.backoff_max = std::numeric_limits<millis>::max();
  policy.backoff_base = std::numeric_limits<millis>::max() / 3;
  EXPECT_EQ(std::numeric_limits<millis>::max(), backoff_delay(3, policy));
  EXPECT_EQ(std::numeric_limits<millis>::max(),
            backoff_delay(std::numeric_limits<int>::max(), policy));
  policy.backoff_base = 0;
  EXPECT_EQ(0, backoff_delay(10, policy));
}

namespace {

// The stall rule's question, in constant time: did anything change since
// the last look? Asked on a connection of its own, as the run's probe does.
// SQLite's data_version counts other connections' commits only, at once.
// PostgreSQL's mark is the outbox's rows inserted, updated and deleted as
// its statistics count them, whichever statement changed them (an append,
// a claim and an ack are such statements). Each change there runs on the
// test's SQL connection behind pg_stat_force_next_flush, so that its
// backend flushes its counts as it goes idle, before the answer: without
// it they could come up to 10 s later, as for any backend that changed
// rows within a second of its last flush. No mark while the server keeps
// no counts (track_counts off): the run counts instead.
TEST_P(StorageOutboxStore, TheChangeMarkMovesWithEveryChange) {
  auto probe = connect(outbox::storage::open_mode::existing);
  auto views = probe->views();
  auto before = views->change_mark();
  ASSERT_TRUE(before.has_value());
  if (postgres()) {
    EXPECT_EQ(views->change_mark(), before) << "nothing changed";
    exec("SELECT pg_stat_force_next_flush(); "
         "INSERT INTO outbox (aggregate_id, seq, event_type, payload) "
         "VALUES ('a', 1, 'Happened', '{}')");
    auto inserted = views->change_mark();
    EXPECT_NE(inserted, before) << "an insert";
    exec("SELECT pg_stat_force_next_flush(); "
         "UPDATE outbox SET status = 'SENDING', owner = 'relay-1', "
         "lease_until = clock_timestamp() WHERE aggregate_id = 'a'");
    auto updated = views->change_mark();
    EXPECT_NE(updated, inserted) << "an update";
    exec("SELECT pg_stat_force_next_flush(); "
         "DELETE FROM outbox WHERE aggregate_id = 'a'");
    EXPECT_NE(views->change_mark(), updated) << "a delete";

    auto uncounted = options();
    uncounted.path += "&options=-c%20track_counts%3Doff";
    auto blind = outbox::storage::connect(uncounted,
                                          outbox::storage::open_mode::existing);
    EXPECT_FALSE(blind->views()->change_mark().has_value())
        << "track_counts off: no mark";
    return;
  }
  EXPECT_EQ(views->change_mark(), before) << "nothing committed";
  append_all({"a"});
  auto appended = views->change_mark();
  EXPECT_NE(appended, before) << "an append";
  policy_.batch = 1;
  auto claimed = outbox_.claim_batch("relay-1", 1000, policy_);
  ASSERT_EQ(1u, claimed.events.size());
  auto after_claim = views->change_mark();
  EXPECT_NE(after_claim, appended) << "a claim";
  EXPECT_EQ(views->change_mark(), after_claim) << "nothing since";
  outbox_.ack("relay-1", claimed.leases(), 1001);
  EXPECT_NE(views->change_mark(), after_claim) << "an ack";
}

} // namespace
