#include "tests/storage/outbox_store_fixture.hpp"

#include "storage/sqlite/lease_sql.hpp"
#include "tests/storage/storage_fixture.hpp"

// Claiming: which rows a claim takes, in what order, what an aggregate
// leased or failed elsewhere holds back, and that the walk stays bounded and
// on the indexes however many rows wait.

using namespace outbox::storage;
using StorageOutboxStore = outbox::test::outbox_store_fixture;
// Once for the suite: its cases are here and in the lease and failure tests.
OUTBOX_ON_BOTH_BACKENDS(StorageOutboxStore);

namespace {
/// What the query planner does with SQLite's statements: SQLite only.
using StorageOutboxStoreOnSQLite = outbox::test::storage_fixture;
} // namespace

TEST_P(StorageOutboxStore, ClaimTakesRowsInInsertionOrderUpToBatch) {
  append_all({"a", "b", "c", "d", "e"});
  policy_.batch = 3;
  auto first = outbox_.claim_batch("relay-1", 1000, policy_);
  EXPECT_EQ((strings{"a:1", "b:1", "c:1"}), keys(first));
  EXPECT_EQ("relay-1", first.owner);
  EXPECT_EQ(1010, first.lease_until);
  EXPECT_EQ(0, first.taken_over);
  EXPECT_EQ(0, first.failed);
  for (const auto& event : first.events) {
    EXPECT_EQ(1, event.epoch);
    EXPECT_EQ(1, event.attempts);
    EXPECT_FALSE(event.taken_over);
    EXPECT_EQ("Happened", event.event_type);
    EXPECT_EQ("{}", event.payload);
    EXPECT_EQ("SENDING", column(event.event_id, "status"));
    EXPECT_EQ("relay-1", column(event.event_id, "owner"));
    EXPECT_EQ("1010", column(event.event_id, "lease_until"));
  }
  auto second = outbox_.claim_batch("relay-2", 1000, policy_);
  EXPECT_EQ((strings{"d:1", "e:1"}), keys(second));
  EXPECT_TRUE(outbox_.claim_batch("relay-3", 1000, policy_).events.empty());
  auto leases = first.leases();
  ASSERT_EQ(3u, leases.size());
  EXPECT_EQ(first.events[2].event_id, leases[2].event_id);
  EXPECT_EQ(1, leases[2].epoch);
}

TEST_P(StorageOutboxStore, ClaimTakesConsecutiveRowsOfAnAggregateInOrder) {
  append_all({"a", "b", "a", "b", "a"});
  auto c = outbox_.claim_batch("relay-1", 0, policy_);
  // By design the order across aggregates differs: SQLite takes rows
  // oldest first; PostgreSQL walks the aggregates in key order and takes
  // each one's run from its head (docs/postgres-protocol.md, "Claim").
  // Within an aggregate both take seq order.
  auto expected = postgres() ? strings{"a:1", "a:2", "a:3", "b:1", "b:2"}
                             : strings{"a:1", "b:1", "a:2", "b:2", "a:3"};
  EXPECT_EQ(expected, keys(c));
}

TEST_P(StorageOutboxStore, HeadOfLineBlocksAnAggregateLeasedElsewhere) {
  append_all({"a", "a", "a"});
  policy_.batch = 1;
  auto first = outbox_.claim_batch("relay-1", 0, policy_);
  EXPECT_EQ((strings{"a:1"}), keys(first));
  append("b");
  policy_.batch = 100;
  // a:2 and a:3 wait for a:1, held by relay-1; other aggregates flow.
  EXPECT_EQ((strings{"b:1"}), keys(outbox_.claim_batch("relay-2", 1, policy_)));
  EXPECT_TRUE(outbox_.claim_batch("relay-2", 2, policy_).events.empty());
  EXPECT_EQ(1, outbox_.ack("relay-1", first.leases(), 3).acked);
  EXPECT_EQ((strings{"a:2", "a:3"}),
            keys(outbox_.claim_batch("relay-2", 4, policy_)));
}

TEST_F(StorageOutboxStoreOnSQLite, HotQueriesUseThePartialIndexes) {
  auto joined = [](const std::vector<std::string>& lines) {
    std::string all;
    for (const auto& line : lines)
      all += line + "\n";
    return all;
  };
  auto no_full_scan = [](const std::vector<std::string>& lines) {
    for (const auto& line : lines)
      if (line.find("SCAN outbox") != std::string::npos &&
          line.find("INDEX") == std::string::npos)
        return false;
    return true;
  };
  auto claim_plan = query_plan(sqlite::sql::claim_candidates);
  auto claim_text = joined(claim_plan);
  EXPECT_NE(std::string::npos, claim_text.find("outbox_pending")) << claim_text;
  // The resumed walk seeks into the pending index, it does not filter it.
  EXPECT_NE(std::string::npos, claim_text.find("outbox_pending (status=? AND"
                                               " rowid>? AND rowid<?)"))
      << claim_text;
  EXPECT_NE(std::string::npos, claim_text.find("outbox_leased")) << claim_text;
  EXPECT_NE(std::string::npos, claim_text.find("MERGE")) << claim_text;
  EXPECT_TRUE(no_full_scan(claim_plan)) << claim_text;
  auto head_plan = query_plan(sqlite::sql::head_seq);
  auto head_text = joined(head_plan);
  EXPECT_NE(std::string::npos, head_text.find("outbox_unpublished"))
      << head_text;
  EXPECT_TRUE(no_full_scan(head_plan)) << head_text;
  // Fenced updates find the row by rowid, not through the event_id index.
  for (auto fenced : {sqlite::sql::ack_row, sqlite::sql::release_row,
                      sqlite::sql::renew_row, sqlite::sql::held_row}) {
    auto text = joined(query_plan(fenced));
    EXPECT_NE(std::string::npos, text.find("INTEGER PRIMARY KEY (rowid=?)"))
        << fenced << "\n"
        << text;
  }
}

TEST_P(StorageOutboxStore, ClaimWalkIsBoundedAndLaterClaimsProgress) {
  constexpr int waiting = 3000;
  orders_->append_event({"held", "T", "{}"}, 0);
  policy_.ttl = 1'000'000;
  policy_.batch = 1;
  auto head = outbox_.claim_batch("relay-1", 0, policy_);
  ASSERT_EQ((strings{"held:1"}), keys(head));
  // Many rows wait behind relay-1's lease, then a few free aggregates.
  std::vector<event_request> rows(waiting, event_request{"held", "T", "{}"});
  for (int i = 0; i < 10; ++i)
    rows.push_back({"free-" + std::to_string(i), "T", "{}"});
  orders_->append_events(rows, 0);
  policy_.batch = 100;
  auto bound = claim_scan_bound(policy_);
  ASSERT_EQ(1024, bound);
  int claims = 0;
  claim c;
  do {
    c = outbox_.claim_batch("relay-2", 1, policy_);
    ++claims;
    EXPECT_LE(c.scanned, bound);
    if (c.events.empty()) {
      EXPECT_TRUE(c.more_candidates) << "an empty cut walk asks to go on";
    }
  } while (c.events.empty() && claims < 20);
  EXPECT_EQ(10u, c.events.size()) << "the free aggregates are reached";
  EXPECT_LE(claims, 2 * waiting / bound + 2);
  for (const auto& event : c.events)
    EXPECT_EQ(0u, event.aggregate_id.rfind("free-", 0)) << event.aggregate_id;
  EXPECT_EQ(10, outbox_.ack("relay-2", c.leases(), 2).acked);
  // Once the head is acknowledged, the next claim takes the waiting rows in
  // seq order, though the walk had moved past them.
  EXPECT_EQ(1, outbox_.ack("relay-1", head.leases(), 2).acked);
  auto next = outbox_.claim_batch("relay-2", 3, policy_);
  ASSERT_EQ(100u, next.events.size());
  for (std::size_t i = 0; i < next.events.size(); ++i)
    EXPECT_EQ("held:" + std::to_string(i + 2), keys(next)[i]);
  // Everything drains, in seq order, in bounded claims.
  std::int64_t expected_seq = 102;
  outbox_.ack("relay-2", next.leases(), 4);
  for (int i = 0; i < 100; ++i) {
    auto more = outbox_.claim_batch("relay-2", 5, policy_);
    EXPECT_LE(more.scanned, bound);
    if (more.events.empty() && !more.more_candidates)
      break;
    for (const auto& event : more.events)
      EXPECT_EQ(expected_seq++, event.seq);
    outbox_.ack("relay-2", more.leases(), 6);
  }
  EXPECT_EQ(waiting + 2, expected_seq);
  EXPECT_EQ(0, scalar("SELECT COUNT(*) FROM outbox"
                      " WHERE status <> 'PUBLISHED'"));
}

TEST_P(StorageOutboxStore, AFailedHeadDoesNotStarveOtherAggregates) {
  orders_->append_event({"stuck", "T", "{}"}, 0);
  policy_.max_attempts = 1;
  auto c = outbox_.claim_batch("relay-1", 0, policy_);
  ASSERT_EQ(1, outbox_.fail("relay-1", c.leases(), "bad", 0, policy_).failed);
  // Rows behind the FAILED head are oldest, for ever: claims must still get
  // past them to the rows of other aggregates, batch after batch.
  std::vector<event_request> rows(2500, event_request{"stuck", "T", "{}"});
  for (int i = 0; i < 300; ++i)
    rows.push_back({"ok-" + std::to_string(i), "T", "{}"});
  orders_->append_events(rows, 0);
  policy_.batch = 100;
  int taken = 0;
  for (int i = 0; i < 30 && taken < 300; ++i) {
    auto more = outbox_.claim_batch("relay-2", 1, policy_);
    EXPECT_LE(more.scanned, claim_scan_bound(policy_));
    taken += static_cast<int>(more.events.size());
    outbox_.ack("relay-2", more.leases(), 2);
  }
  EXPECT_EQ(300, taken);
  EXPECT_EQ(2500, scalar("SELECT COUNT(*) FROM outbox"
                         " WHERE status = 'PENDING'"));
}
