#include "audit/audit_tables.hpp"
#include "audit/conservation.hpp"
#include "tests/audit/ledger_rows.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <SQLiteCpp/Database.h>

namespace outbox::audit {
namespace {

using testing_rows::find;
using testing_rows::placed;
using testing_rows::row_of;

TEST(AuditConservation, ConsistentStatePasses) {
  std::vector<storage::ledger_row> ledger{placed("e1", "apple", 2),
                                          placed("e2", "apple", 3),
                                          placed("e3", "pear", 1, "PENDING")};
  broker::inbox_snapshot inbox{{{"e1", "{}"}, {"e2", "{}"}}, {{"apple", 5}}};
  auto v = evaluate(ledger, inbox, {});
  EXPECT_TRUE(v.ok()) << v.to_text();
  EXPECT_EQ(v.published, 2);
  EXPECT_EQ(v.unpublished, 1);
  EXPECT_EQ(find(v, "published_processed").result, check::state::passed);
}

TEST(AuditConservation, PublishedButNeverProcessedFailsOnceDrained) {
  std::vector<storage::ledger_row> ledger{placed("e1", "apple", 2),
                                          placed("lost", "apple", 3)};
  broker::inbox_snapshot inbox{{{"e1", "{}"}}, {{"apple", 2}}};
  auto v = evaluate(ledger, inbox, {});
  EXPECT_FALSE(v.ok());
  EXPECT_EQ(find(v, "published_processed").result, check::state::failed);
  EXPECT_NE(find(v, "published_processed").detail.find("lost"),
            std::string::npos);
}

TEST(AuditConservation, DoubleEffectFailsReservation) {
  std::vector<storage::ledger_row> ledger{placed("e1", "apple", 2)};
  broker::inbox_snapshot inbox{{{"e1", "{}"}}, {{"apple", 4}}};
  auto v = evaluate(ledger, inbox, {});
  EXPECT_EQ(find(v, "reserved_matches").result, check::state::failed);
  EXPECT_NE(find(v, "reserved_matches").detail.find("apple reserved=4"),
            std::string::npos);
}

TEST(AuditConservation, ReservationForAnUnknownSkuFails) {
  broker::inbox_snapshot inbox{{}, {{"ghost", 1}}};
  auto v = evaluate({}, inbox, {});
  EXPECT_EQ(find(v, "reserved_matches").result, check::state::failed);
}

TEST(AuditConservation, OrphanEffectAndOrderViolationFail) {
  broker::inbox_snapshot inbox{{{"stranger", "{}"}}, {}};
  broker::broker_stats queues;
  queues.counters["order_violations"] = 2;
  auto v = evaluate({}, inbox, queues);
  EXPECT_EQ(find(v, "no_orphan_effects").result, check::state::failed);
  EXPECT_EQ(find(v, "order_kept").result, check::state::failed);
  EXPECT_THAT(v.to_json(), testing::HasSubstr("\"ok\":false"));
}

TEST(AuditConservation, RowsCommittedAfterTheLedgerReadAreNotOrphans) {
  std::vector<storage::ledger_row> ledger{placed("e1", "apple", 2)};
  std::vector<storage::ledger_row> later{placed("e2", "apple", 3)};
  broker::inbox_snapshot inbox{{{"e1", "{}"}, {"e2", "{}"}}, {{"apple", 5}}};
  auto v = evaluate(ledger, inbox, {}, later);
  EXPECT_TRUE(v.ok()) << v.to_text();
  EXPECT_EQ(find(v, "reserved_matches").result, check::state::passed);
}

TEST(AuditConservation, ReservationIsNotJudgedWhileConsumersApply) {
  std::vector<storage::ledger_row> ledger{placed("e1", "apple", 2)};
  broker::inbox_snapshot inbox{{{"e1", "{}"}}, {{"apple", 7}}, false};
  auto v = evaluate(ledger, inbox, {});
  EXPECT_EQ(find(v, "reserved_matches").result, check::state::skipped);
}

TEST(AuditConservation, PurgedHistoryIsNeitherAnOrphanNorAMismatch) {
  // o-1's seq 1 (OrderPlaced apple x2) was purged; seq 2 remains.
  storage::ledger_row paid{"e2", "o-1", 2, "OrderPaid", "PUBLISHED", "", 0};
  std::vector<storage::ledger_row> ledger{paid, placed("e3", "pear", 1)};
  broker::inbox_snapshot inbox{
      {{"e1", R"({"event_type":"OrderPlaced","aggregate_id":"o-1","seq":1,)"
              R"("sku":"apple","qty":2,"at":1})"},
       {"e2", R"({"event_type":"OrderPaid","aggregate_id":"o-1","seq":2})"},
       {"e3", "{}"}},
      {{"apple", 2}, {"pear", 1}}};
  auto v = evaluate(ledger, inbox, {});
  EXPECT_TRUE(v.ok()) << v.to_text();
  EXPECT_NE(find(v, "no_orphan_effects").detail.find("1 more are of purged"),
            std::string::npos);
}

TEST(AuditConservation, AnEffectNotBeforeItsAggregatesRowsIsAnOrphan) {
  storage::ledger_row paid{"e2", "o-1", 2, "OrderPaid", "PUBLISHED", "", 0};
  broker::inbox_snapshot inbox{
      {{"e2", R"({"event_type":"OrderPaid","aggregate_id":"o-1","seq":2})"},
       // Same aggregate, seq after the remaining row: not purged history.
       {"x3", R"({"event_type":"OrderShipped","aggregate_id":"o-1","seq":3})"},
       // An aggregate the outbox never had.
       {"x1", R"({"event_type":"OrderPlaced","aggregate_id":"o-9","seq":1,)"
              R"("sku":"fig","qty":1})"},
       // A record that names nothing.
       {"x0", "{}"}},
      {{"fig", 1}}};
  auto v = evaluate({paid}, inbox, {});
  EXPECT_EQ(find(v, "no_orphan_effects").result, check::state::failed);
  EXPECT_NE(find(v, "no_orphan_effects").detail.find("3 processed events"),
            std::string::npos)
      << find(v, "no_orphan_effects").detail;
}

TEST(AuditConservation, TrimmedRecordsAreNeitherLostNorAMismatch) {
  // e1 (apple x2) was published at 100 and its record trimmed with cutoff
  // 500; e2 was published at 900, after the cutoff, and must have a record.
  auto e1 = placed("e1", "apple", 2);
  e1.published_at = 100;
  auto e2 = placed("e2", "apple", 3);
  e2.published_at = 900;
  broker::inbox_snapshot inbox{{{"e2", "{}"}}, {{"apple", 5}}};
  inbox.trimmed_records = 1;
  inbox.trimmed_before = 500;
  inbox.trimmed_reserved = {{"apple", 2}};
  // The inbox applied e1's seq: its record is what trim removed.
  inbox.applied_seqs = {{"order-e1", 1}, {"order-e2", 1}};
  auto v = evaluate({e1, e2}, inbox, {});
  EXPECT_TRUE(v.ok()) << v.to_text();
  EXPECT_NE(find(v, "published_processed").detail.find("1 published before"),
            std::string::npos)
      << find(v, "published_processed").detail;

  // Without its record, e2 is lost, trim or not.
  inbox.processed.clear();
  auto lost = evaluate({e1, e2}, inbox, {});
  EXPECT_EQ(find(lost, "published_processed").result, check::state::failed);
  EXPECT_NE(find(lost, "published_processed").detail.find("e2"),
            std::string::npos);

  // A trimmed effect no longer in the summary is a mismatch.
  inbox.processed = {{"e2", "{}"}};
  inbox.trimmed_reserved.clear();
  auto short_by_two = evaluate({e1, e2}, inbox, {});
  EXPECT_EQ(find(short_by_two, "reserved_matches").result,
            check::state::failed);
}

/// A record as the inbox script writes it.
std::string record(const std::string& aggregate, std::int64_t seq,
                   const std::string& sku = "", std::int64_t qty = 0) {
  std::string r = R"({"event_type":")" +
                  std::string(sku.empty() ? "OrderPaid" : "OrderPlaced") +
                  R"(","aggregate_id":")" + aggregate + R"(","seq":)" +
                  std::to_string(seq);
  if (!sku.empty())
    r += R"(,"sku":")" + sku + R"(","qty":)" + std::to_string(qty);
  return r + R"(,"at":1})";
}

TEST(AuditConservation, AnEventAppliedAgainAfterItsTrimFailsAppliedOnce) {
  // e1 (apple x2) was applied, trimmed, then applied again: two effects,
  // one record, one trimmed; the reservations still add up.
  auto e1 = row_of("e1", "o-1", 1, 100);
  e1.event_type = "OrderPlaced";
  e1.sku = "apple";
  e1.qty = 2;
  broker::inbox_snapshot inbox{{{"e1", record("o-1", 1, "apple", 2)}},
                               {{"apple", 4}}};
  inbox.trimmed_records = 1;
  inbox.trimmed_before = 500;
  inbox.trimmed_reserved = {{"apple", 2}};
  inbox.trimmed_by_aggregate = {{"o-1", 1}};
  auto v = evaluate({e1}, inbox, {});
  EXPECT_EQ(find(v, "reserved_matches").result, check::state::passed);
  EXPECT_EQ(find(v, "applied_once").result, check::state::failed);
  EXPECT_NE(find(v, "applied_once").detail.find("o-1 applied 2 for 1"),
            std::string::npos)
      << find(v, "applied_once").detail;

  // Without the second effect, all holds.
  inbox.processed.clear();
  inbox.applied_seqs = {{"o-1", 1}};
  inbox.reserved = {{"apple", 2}};
  EXPECT_TRUE(evaluate({e1}, inbox, {}).ok())
      << evaluate({e1}, inbox, {}).to_text();
}

TEST(AuditConservation, AMalformedReservationIsANamedFinding) {
  broker::inbox_snapshot inbox{{{"e1", "{}"}}, {}};
  inbox.malformed = {R"(inventory.reserved[kiwi] is not an integer: "x")"};
  auto v = evaluate({placed("e1", "apple", 2)}, inbox, {});
  EXPECT_EQ(find(v, "reserved_matches").result, check::state::failed);
  EXPECT_NE(find(v, "reserved_matches").detail.find("kiwi] is not an integer"),
            std::string::npos)
      << find(v, "reserved_matches").detail;
}

TEST(AuditConservation, AnEmptiedAggregatesHeadCoversItsPurgedRecords) {
  // o-1 was purged to its last row (seq 2): only its head is left.
  broker::inbox_snapshot inbox{
      {{"e1", R"({"event_type":"OrderPlaced","aggregate_id":"o-1","seq":1,)"
              R"("sku":"apple","qty":2,"at":1})"},
       {"e2", R"({"event_type":"OrderPaid","aggregate_id":"o-1","seq":2})"},
       // Past the head: nothing of the outbox's ever had that seq.
       {"x3", R"({"event_type":"OrderPaid","aggregate_id":"o-1","seq":3})"}},
      {{"apple", 2}}};
  auto v = evaluate({}, inbox, {}, {}, {{"o-1", 2}});
  EXPECT_EQ(find(v, "no_orphan_effects").result, check::state::failed);
  EXPECT_NE(find(v, "no_orphan_effects").detail.find("1 processed events"),
            std::string::npos)
      << find(v, "no_orphan_effects").detail;
  EXPECT_NE(find(v, "no_orphan_effects").detail.find("x3"), std::string::npos);
  EXPECT_EQ(find(v, "reserved_matches").result, check::state::passed)
      << find(v, "reserved_matches").detail;

  inbox.processed.erase("x3");
  EXPECT_TRUE(evaluate({}, inbox, {}, {}, {{"o-1", 2}}).ok());
  // Without the head the same records are orphans.
  EXPECT_EQ(find(evaluate({}, inbox, {}), "no_orphan_effects").result,
            check::state::failed);
}

} // namespace
} // namespace outbox::audit

namespace outbox::audit {
namespace {

// HSCAN may hand a field over twice (a rehash during the scan): the first
// copy counts, and the records gathered page by page all reach the tables
// the checks read, with the index they join on.
TEST(AuditTables, RecordsGivenTwiceCountOnceAndTheFirstCopyStays) {
  SQLite::Database memory{":memory:",
                          SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE};
  audit_tables tables{memory};
  auto record = [](const std::string& sku) {
    return R"({"event_type":"OrderPlaced","aggregate_id":"order-1","seq":1,)"
           R"("sku":")" +
           sku + R"(","qty":2,"at":1})";
  };
  broker::hash_page first{{"e2", record("pear")}, {"e1", record("apple")}};
  broker::hash_page second{{"e1", record("fig")}, {"e3", record("kiwi")}};
  tables.processed(first);
  tables.processed(second);
  EXPECT_EQ(tables.processed_count(), 3);
  EXPECT_EQ(memory
                .execAndGet("SELECT sku FROM temp.audit_processed"
                            " WHERE event_id = 'e1'")
                .getString(),
            "apple");
  EXPECT_EQ(memory
                .execAndGet("SELECT count(*) FROM sqlite_temp_master"
                            " WHERE name = 'audit_processed_aggregate'")
                .getInt(),
            1);
  // Forgotten and read again: only what this read gave.
  tables.forget_all_but_ledger();
  tables.processed(second);
  EXPECT_EQ(tables.processed_count(), 2);
}

} // namespace
} // namespace outbox::audit

namespace outbox::audit {
namespace {

TEST(AuditConservation, EveryEventTypeIsCountedByName) {
  std::vector<storage::ledger_row> ledger{
      testing_rows::placed("e1", "apple", 2),
      testing_rows::placed("e2", "apple", 3, "PENDING"),
      testing_rows::row_of("i1", "invoice-1", 1, 10),
      testing_rows::row_of("i2", "invoice-1", 2, 11),
      testing_rows::row_of("i3", "invoice-2", 1, 12)};
  broker::inbox_snapshot inbox{{{"e1", "{}"}, {"i1", "{}"}, {"i3", "{}"}},
                               {{"apple", 2}}};
  auto v = evaluate(ledger, inbox, {});
  ASSERT_EQ(v.by_type.size(), 2u);
  EXPECT_EQ(v.by_type.at("OrderPlaced").published, 1) << "PENDING is not";
  EXPECT_EQ(v.by_type.at("OrderPlaced").processed, 1);
  EXPECT_EQ(v.by_type.at("ItemAdded").published, 3);
  EXPECT_EQ(v.by_type.at("ItemAdded").processed, 2);
  EXPECT_NE(v.to_text().find("by event type (processed of published): "
                             "ItemAdded 2/3 OrderPlaced 1/1"),
            std::string::npos)
      << v.to_text();
  EXPECT_NE(v.to_json().find(R"("ItemAdded":{"processed":2,"published":3})"),
            std::string::npos)
      << v.to_json();
}

} // namespace
} // namespace outbox::audit
