#include "storage/outbox_store.hpp"

#include "storage/order_store.hpp"
#include "storage/outbox_sql.hpp"
#include "storage/store_error.hpp"
#include "storage_fixture.hpp"

#include <limits>

using namespace outbox::storage;

namespace {

class OutboxStoreTest : public outbox::test::storage_fixture {
protected:
  OutboxStoreTest() {
    policy_.ttl = 10;
    policy_.batch = 100;
    policy_.max_attempts = 3;
    policy_.backoff_base = 100;
    policy_.backoff_max = 1000;
  }

  /// Appends one event to `aggregate_id` (at time 0); returns its event_id.
  std::string append(const std::string& aggregate_id) {
    return orders_.append_event({aggregate_id, "Happened", "{}"}, 0).event_id;
  }

  /// "aggregate:seq" of each claimed event, in claim order.
  static std::vector<std::string> keys(const claim& c) {
    std::vector<std::string> result;
    for (const auto& event : c.events)
      result.push_back(event.aggregate_id + ":" + std::to_string(event.seq));
    return result;
  }

  std::string column(const std::string& event_id, const std::string& name) {
    return text("SELECT COALESCE(" + name +
                ", 'NULL') FROM outbox"
                " WHERE event_id = '" +
                event_id + "'");
  }

  lease_policy policy_;
  order_store orders_{*db_};
  outbox_store outbox_{*db_};
};

using strings = std::vector<std::string>;

} // namespace

TEST_F(OutboxStoreTest, claim_takes_rows_in_insertion_order_up_to_batch) {
  for (auto aggregate : {"a", "b", "c", "d", "e"})
    append(aggregate);
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

TEST_F(OutboxStoreTest, claim_takes_consecutive_rows_of_an_aggregate_in_order) {
  for (auto aggregate : {"a", "b", "a", "b", "a"})
    append(aggregate);
  auto c = outbox_.claim_batch("relay-1", 0, policy_);
  EXPECT_EQ((strings{"a:1", "b:1", "a:2", "b:2", "a:3"}), keys(c));
}

TEST_F(OutboxStoreTest, head_of_line_blocks_an_aggregate_leased_elsewhere) {
  append("a");
  append("a");
  append("a");
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

TEST_F(OutboxStoreTest, expired_lease_is_taken_over_and_the_old_ack_fenced) {
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

TEST_F(OutboxStoreTest, renew_extends_held_leases_only) {
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

TEST_F(OutboxStoreTest, release_makes_rows_claimable_at_once) {
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

TEST_F(OutboxStoreTest, fail_backs_off_then_fails_and_blocks_its_aggregate) {
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

TEST_F(OutboxStoreTest, fail_ignores_rows_no_longer_held) {
  append("a");
  auto first = outbox_.claim_batch("relay-1", 0, policy_);
  outbox_.claim_batch("relay-2", 10, policy_); // takes it over
  auto result = outbox_.fail("relay-1", first.leases(), "timeout", 11, policy_);
  EXPECT_EQ(1, result.not_held);
  EXPECT_EQ(0, result.backed_off + result.failed);
  EXPECT_EQ("SENDING", column(first.events[0].event_id, "status"));
}

TEST_F(OutboxStoreTest, row_whose_lease_keeps_expiring_ends_failed) {
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

TEST_F(OutboxStoreTest, failed_row_blocks_later_rows_claimed_with_it) {
  append("a");
  append("a");
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

TEST_F(OutboxStoreTest, retry_puts_failed_rows_back) {
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

TEST_F(OutboxStoreTest, retry_all_failed_retries_every_failed_row) {
  append("a");
  append("b");
  append("c");
  policy_.max_attempts = 1;
  auto c = outbox_.claim_batch("relay-1", 0, policy_);
  outbox_.fail("relay-1", {c.leases().at(0), c.leases().at(1)}, "bad", 0,
               policy_);
  EXPECT_EQ(2, outbox_.retry_all_failed(7));
  EXPECT_EQ(0, outbox_.retry_all_failed(8));
  EXPECT_EQ((strings{"a:1", "b:1"}),
            keys(outbox_.claim_batch("relay-2", 7, policy_)));
}

TEST_F(OutboxStoreTest, stats_counts_every_status_and_lease) {
  auto empty = outbox_.stats(0);
  EXPECT_EQ(
      (std::map<std::string, std::int64_t>{
          {"PENDING", 0}, {"SENDING", 0}, {"PUBLISHED", 0}, {"FAILED", 0}}),
      empty.by_status);
  EXPECT_EQ(0, empty.orders);
  EXPECT_EQ(0, empty.oldest_unpublished_age);
  orders_.place_order({std::nullopt, "SKU-1", 1}, 100); // order-1:1
  orders_.place_order({std::nullopt, "SKU-2", 1}, 200); // order-2:1
  append("a");                                          // created_at 0
  append("b");
  append("c");
  orders_.append_event({"d", "T", "{}"}, 300);
  policy_.max_attempts = 1;
  policy_.batch = 1;
  auto r1 = outbox_.claim_batch("relay-1", 1000, policy_); // order-1
  auto r2 = outbox_.claim_batch("relay-2", 1000, policy_); // order-2
  outbox_.ack("relay-2", r2.leases(), 1001);
  auto r3 = outbox_.claim_batch("relay-2", 1005, policy_); // a
  auto f = outbox_.claim_batch("relay-3", 1000, policy_);  // b
  outbox_.fail("relay-3", f.leases(), "boom", 1000, policy_);
  auto stats = outbox_.stats(1012);
  EXPECT_EQ(2, stats.by_status["PENDING"]); // c, d
  EXPECT_EQ(2, stats.by_status["SENDING"]); // order-1, a
  EXPECT_EQ(1, stats.by_status["PUBLISHED"]);
  EXPECT_EQ(1, stats.by_status["FAILED"]);
  EXPECT_EQ(2, stats.orders);
  EXPECT_EQ(1012, stats.oldest_unpublished_age) << "a and c: created at 0";
  EXPECT_EQ(1, stats.expired_leases) << "relay-1's lease ended at 1010";
  ASSERT_EQ(2u, stats.leases.size());
  EXPECT_EQ("relay-1", stats.leases[0].owner);
  EXPECT_EQ(1, stats.leases[0].rows);
  EXPECT_EQ(1010, stats.leases[0].earliest_expiry);
  EXPECT_EQ("relay-2", stats.leases[1].owner);
  EXPECT_EQ(1015, stats.leases[1].earliest_expiry);
  ASSERT_EQ(1u, stats.failed.size());
  EXPECT_EQ(f.events.at(0).event_id, stats.failed[0].event_id);
  EXPECT_EQ("b", stats.failed[0].aggregate_id);
  EXPECT_EQ(1, stats.failed[0].seq);
  EXPECT_EQ(1, stats.failed[0].attempts);
  EXPECT_EQ("boom", stats.failed[0].last_error);
  (void)r1;
  (void)r3;
}

TEST_F(OutboxStoreTest, rejects_a_bad_owner_or_policy) {
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

TEST(OutboxStoreBackoffTest, doubles_from_base_up_to_the_cap) {
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

TEST_F(OutboxStoreTest, hot_queries_use_the_partial_indexes) {
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
  auto claim_plan = query_plan(sql::claim_candidates);
  auto claim_text = joined(claim_plan);
  EXPECT_NE(std::string::npos, claim_text.find("outbox_pending")) << claim_text;
  // The resumed walk seeks into the pending index, it does not filter it.
  EXPECT_NE(std::string::npos, claim_text.find("outbox_pending (status=? AND"
                                               " rowid>? AND rowid<?)"))
      << claim_text;
  EXPECT_NE(std::string::npos, claim_text.find("outbox_leased")) << claim_text;
  EXPECT_NE(std::string::npos, claim_text.find("MERGE")) << claim_text;
  EXPECT_TRUE(no_full_scan(claim_plan)) << claim_text;
  auto head_plan = query_plan(sql::head_seq);
  auto head_text = joined(head_plan);
  EXPECT_NE(std::string::npos, head_text.find("outbox_unpublished"))
      << head_text;
  EXPECT_TRUE(no_full_scan(head_plan)) << head_text;
  // Fenced updates find the row by rowid, not through the event_id index.
  for (auto fenced :
       {sql::ack_row, sql::release_row, sql::renew_row, sql::held_row}) {
    auto text = joined(query_plan(fenced));
    EXPECT_NE(std::string::npos, text.find("INTEGER PRIMARY KEY (rowid=?)"))
        << fenced << "\n"
        << text;
  }
}

TEST_F(OutboxStoreTest, leases_carry_the_rowid_and_ack_by_it_keeps_the_fence) {
  auto first_id = append("a");
  auto second_id = append("b");
  auto c = outbox_.claim_batch("relay-1", 0, policy_);
  auto leases = c.leases();
  ASSERT_EQ(2u, leases.size());
  EXPECT_EQ(
      scalar("SELECT rowid FROM outbox WHERE event_id = '" + first_id + "'"),
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

TEST_F(OutboxStoreTest, claim_walk_is_bounded_and_later_claims_progress) {
  constexpr int waiting = 3000;
  orders_.append_event({"held", "T", "{}"}, 0);
  policy_.ttl = 1'000'000;
  policy_.batch = 1;
  auto head = outbox_.claim_batch("relay-1", 0, policy_);
  ASSERT_EQ((strings{"held:1"}), keys(head));
  // Many rows wait behind relay-1's lease, then a few free aggregates.
  std::vector<event_request> rows(waiting, event_request{"held", "T", "{}"});
  for (int i = 0; i < 10; ++i)
    rows.push_back({"free-" + std::to_string(i), "T", "{}"});
  orders_.append_events(rows, 0);
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

TEST_F(OutboxStoreTest, a_failed_head_does_not_starve_other_aggregates) {
  orders_.append_event({"stuck", "T", "{}"}, 0);
  policy_.max_attempts = 1;
  auto c = outbox_.claim_batch("relay-1", 0, policy_);
  ASSERT_EQ(1, outbox_.fail("relay-1", c.leases(), "bad", 0, policy_).failed);
  // Rows behind the FAILED head are oldest, for ever: claims must still get
  // past them to the rows of other aggregates, batch after batch.
  std::vector<event_request> rows(2500, event_request{"stuck", "T", "{}"});
  for (int i = 0; i < 300; ++i)
    rows.push_back({"ok-" + std::to_string(i), "T", "{}"});
  orders_.append_events(rows, 0);
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
