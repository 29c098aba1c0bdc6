#include "audit/conservation.hpp"
#include "tests/audit/ledger_rows.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

// The checks that account for each published event by its id
// (delivery_checks.hpp): waiting, dead-lettered, trimmed, lost; and an
// order's lifecycle event written twice.

namespace outbox::audit {
namespace {

using testing_rows::find;
using testing_rows::placed;
using testing_rows::row_of;

TEST(AuditConservation, AnEventThatWaitsIsAccountedForNotLost) {
  std::vector<storage::ledger_row> ledger{placed("e1", "apple", 2),
                                          placed("e2", "apple", 3),
                                          placed("e3", "apple", 4)};
  broker::broker_stats queues;
  queues.queues["outbox.events"] = 1;
  queues.processing["outbox.processing.outbox.events/c1"] = 1;
  broker::inbox_snapshot inbox;
  inbox.waiting = {{"e1", broker::waiting_place::queued},
                   {"e2", broker::waiting_place::processing}};
  inbox.processed = {{"e3", "{}"}};
  inbox.reserved = {{"apple", 4}};
  auto v = evaluate(ledger, inbox, queues);
  EXPECT_TRUE(v.ok()) << v.to_text();
  EXPECT_EQ(find(v, "published_processed").detail,
            "1 of 3 published events processed; 1 queued, 1 in processing "
            "lists");

  // Queues not drained is no excuse any more: an event in none of them,
  // and not applied, is lost (entries removed by hand, a failover).
  inbox.waiting.erase("e2");
  auto lost = evaluate(ledger, inbox, queues);
  EXPECT_EQ(find(lost, "published_processed").result, check::state::failed);
  EXPECT_EQ(find(lost, "published_processed").detail,
            "1 of 3 published events lost: not applied, in no queue, "
            "processing list or dead-letter list, and dropped by no decision "
            "(1 queued): e2");
}

TEST(AuditConservation, ADeadLetteredEventIsItsOwnFindingWithItsRemedy) {
  std::vector<storage::ledger_row> ledger{placed("e1", "apple", 2),
                                          placed("e2", "apple", 3)};
  broker::broker_stats queues;
  queues.dead_letter = 2;
  broker::inbox_snapshot inbox;
  inbox.waiting = {{"e2", broker::waiting_place::dead_lettered}};
  inbox.processed = {{"e1", "{}"}};
  inbox.reserved = {{"apple", 2}};
  auto v = evaluate(ledger, inbox, queues);
  EXPECT_FALSE(v.ok());
  // Not lost: it is where the operator can act on it.
  EXPECT_EQ(find(v, "published_processed").result, check::state::passed);
  EXPECT_NE(find(v, "published_processed").detail.find("1 dead-lettered"),
            std::string::npos);
  const auto& dead = find(v, "dead_letters");
  EXPECT_EQ(dead.result, check::state::failed);
  EXPECT_THAT(dead.detail, testing::StartsWith("1 outbox events wait in the "
                                               "dead-letter list"));
  EXPECT_THAT(dead.detail, testing::HasSubstr("outbox dead-letters replay"));
  EXPECT_THAT(dead.detail, testing::HasSubstr("outbox dead-letters drop"));
  EXPECT_THAT(dead.detail, testing::EndsWith(": e2"));

  // Dropped by an operator's decision: accounted for, and no finding.
  inbox.waiting = {{"e2", broker::waiting_place::dropped}};
  queues.dead_letter = 0;
  queues.dead_letter_dropped = 1;
  auto dropped = evaluate(ledger, inbox, queues);
  EXPECT_TRUE(dropped.ok()) << dropped.to_text();
  EXPECT_EQ(find(dropped, "published_processed").detail,
            "1 of 2 published events processed; 1 dropped from the "
            "dead-letter list by decision (outbox dead-letters drop)");
  EXPECT_THAT(find(dropped, "dead_letters").detail,
              testing::EndsWith("; 1 dropped by decision"));

  // Records of no outbox event (garbage pushed by hand) are no finding.
  queues.dead_letter = 2;
  queues.dead_letter_dropped = 0;
  inbox.waiting.clear();
  inbox.processed = {{"e1", "{}"}, {"e2", "{}"}};
  inbox.reserved = {{"apple", 5}};
  auto garbage_only = evaluate(ledger, inbox, queues);
  EXPECT_TRUE(garbage_only.ok()) << garbage_only.to_text();
  EXPECT_THAT(find(garbage_only, "dead_letters").detail,
              testing::HasSubstr("it holds 2 records"));
}

TEST(AuditConservation, AnOrdersLifecycleEventWrittenTwiceIsFound) {
  storage::ledger_row paid{"p1", "o-1", 2, "OrderPaid", "PUBLISHED", "", 0};
  auto again = paid;
  again.event_id = "p2";
  again.seq = 3;
  auto placed_o1 = placed("e1", "apple", 2);
  placed_o1.aggregate_id = "o-1";
  broker::inbox_snapshot inbox;
  inbox.processed = {{"e1", "{}"}, {"p1", "{}"}, {"p2", "{}"}};
  inbox.reserved = {{"apple", 2}};
  auto v = evaluate({placed_o1, paid, again}, inbox, {});
  EXPECT_EQ(find(v, "events_once").result, check::state::failed);
  EXPECT_EQ(find(v, "events_once").detail,
            "1 orders with a lifecycle event written more than once: o-1 "
            "has 2 OrderPaid");
  inbox.processed.erase("p2");
  EXPECT_TRUE(evaluate({placed_o1, paid}, inbox, {}).ok());
}

TEST(AuditConservation, TrimExcusesOnlyRecordsOfEventsTheInboxApplied) {
  // Trim ran (cutoff 500). a's seqs 1 and 2 were applied; b's seq 1 never
  // reached a consumer (b has no applied seq), and a's seq 3 was skipped
  // by a jump to 4 (the gaps hash names it): both are lost, however many
  // records trim removed and whatever was purged before (the count per
  // aggregate is no allowance any more).
  auto a1 = row_of("a1", "a", 1, 100);
  auto a2 = row_of("a2", "a", 2, 100);
  auto a3 = row_of("a3", "a", 3, 100);
  auto a4 = row_of("a4", "a", 4, 100);
  auto b1 = row_of("b1", "b", 1, 100);
  broker::inbox_snapshot inbox;
  inbox.trimmed_records = 9;
  inbox.trimmed_before = 500;
  inbox.trimmed_by_aggregate = {{"a", 3}, {"b", 6}};
  inbox.applied_seqs = {{"a", 4}};
  inbox.gaps = {{{"a", 3}, "1"}};
  auto v = evaluate({a1, a2, a3, a4, b1}, inbox, {});
  EXPECT_EQ(find(v, "published_processed").result, check::state::failed);
  EXPECT_EQ(find(v, "published_processed").detail,
            "2 of 5 published events lost: not applied, in no queue, "
            "processing list or dead-letter list, and dropped by no decision "
            "(3 published before the "
            "trim cutoff 1970-01-01T00:00:00.500Z have no record any more "
            "(trimmed)): a3, b1");

  // A seq dead-lettered is not applied either.
  inbox.gaps = {{{"a", 3}, "dead"}};
  EXPECT_NE(
      find(evaluate({a3}, inbox, {}), "published_processed").detail.find("a3"),
      std::string::npos);

  // Once b's seq was applied, and a's 3 arrived, all holds.
  inbox.applied_seqs = {{"a", 4}, {"b", 1}};
  inbox.gaps.clear();
  inbox.trimmed_records = 5;
  inbox.trimmed_by_aggregate = {{"a", 4}, {"b", 1}};
  auto all = evaluate({a1, a2, a3, a4, b1}, inbox, {});
  EXPECT_TRUE(all.ok()) << all.to_text();

  // Published after the cutoff: its record cannot have been trimmed.
  auto late = row_of("late", "b", 1, 600);
  EXPECT_EQ(find(evaluate({late}, inbox, {}), "published_processed").result,
            check::state::failed);
}

TEST(AuditConservation, AnOverflowedAggregateFallsBackToTrimsCount) {
  // A jump too long to record: the inbox cannot say which seqs it applied,
  // so trim's count for that aggregate is the allowance.
  auto a1 = row_of("a1", "a", 1, 100);
  auto a2 = row_of("a2", "a", 2, 100);
  broker::inbox_snapshot inbox;
  inbox.trimmed_records = 1;
  inbox.trimmed_before = 500;
  inbox.trimmed_by_aggregate = {{"a", 1}};
  inbox.applied_seqs = {{"a", 5000}};
  inbox.gaps = {{{"a", 0}, "1"}};
  auto v = evaluate({a1, a2}, inbox, {});
  EXPECT_EQ(find(v, "published_processed").result, check::state::failed);
  EXPECT_THAT(find(v, "published_processed").detail, testing::EndsWith(": a2"));
}

} // namespace
} // namespace outbox::audit
