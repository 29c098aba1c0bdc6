// One end-to-end test per lab step: the seed's condition, checked from the
// files, app.db and Redis.

#include "tests/lab/lab_fixture.hpp"

#include "broker/entry.hpp"

#include <SQLiteCpp/Statement.h>
#include <gmock/gmock.h>
#include <hiredis/hiredis.h>

#include <regex>
#include <set>

namespace outbox::test {
namespace {

using LabStep = lab_fixture;

/// The decoded entries of the queue, head first.
std::vector<broker::event_entry>
decoded(const std::vector<std::string>& entries) {
  std::vector<broker::event_entry> result;
  for (const auto& text : entries) {
    auto entry = broker::decode(text);
    EXPECT_TRUE(std::holds_alternative<broker::event_entry>(entry)) << text;
    if (auto* e = std::get_if<broker::event_entry>(&entry))
      result.push_back(*e);
  }
  return result;
}

TEST_F(LabStep, InitCreatesTheSeedsTablesAndPartialIndex) {
  step_ok("init");
  SQLite::Database db{dir_ + "/app.db", SQLite::OPEN_READWRITE};
  auto columns = [&](const std::string& table) {
    std::map<std::string, std::string> found; // name -> default
    SQLite::Statement info{db, "PRAGMA table_info(" + table + ")"};
    while (info.executeStep())
      found[info.getColumn(1).getString()] =
          info.getColumn(4).isNull() ? "" : info.getColumn(4).getString();
    return found;
  };
  auto orders = columns("orders");
  for (auto name : {"id", "sku", "qty"})
    EXPECT_EQ(orders.count(name), 1u) << name;
  auto outbox = columns("outbox");
  for (auto name :
       {"event_id", "aggregate_id", "seq", "event_type", "payload", "status"})
    EXPECT_EQ(outbox.count(name), 1u) << name;
  EXPECT_EQ(outbox["status"], "'PENDING'");
  auto index_sql = db.execAndGet("SELECT sql FROM sqlite_master WHERE "
                                 "type = 'index' AND tbl_name = 'outbox' AND "
                                 "name = 'outbox_pending'")
                       .getString();
  EXPECT_THAT(index_sql,
              testing::HasSubstr("outbox(status) WHERE status = 'PENDING'"));
  // A row inserted without a status gets PENDING.
  db.exec("INSERT INTO outbox (event_id, aggregate_id, seq, event_type, "
          "payload, created_at) VALUES ('e', 'a', 1, 'T', '{}', 0)");
  EXPECT_EQ(db.execAndGet("SELECT status FROM outbox").getString(), "PENDING");
  // init again only migrates: the row is still there.
  step_ok("init");
  EXPECT_EQ(app_db_number("SELECT COUNT(*) FROM outbox"), 1);
}

TEST_F(LabStep, DualwriteLeavesOrdersWithoutPublishedEvents) {
  step_ok("init");
  ASSERT_TRUE(step_says("dualwrite", "Connection refused"));
  auto lines = lines_of("dualwrite.out");
  ASSERT_FALSE(lines.empty());
  std::smatch m;
  ASSERT_TRUE(std::regex_match(
      lines[0], m, std::regex{"INCONSISTENT orders=(\\d+) published=(\\d+)"}))
      << lines[0];
  EXPECT_NE(m[1], m[2]);
  // The numbers are the two stores' own counts.
  SQLite::Database store{dir_ + "/dualwrite.db", SQLite::OPEN_READWRITE};
  EXPECT_EQ(std::to_string(
                store.execAndGet("SELECT COUNT(*) FROM orders").getInt64()),
            m[1].str());
  EXPECT_EQ(std::to_string(redis_number({"LLEN", "dualwrite.events"})),
            m[2].str());
  EXPECT_EQ(m[1], "1");
  // The demo's order never lands in app.db.
  EXPECT_EQ(app_db_number("SELECT COUNT(*) FROM orders"), 0);
  EXPECT_EQ(queue_length(), 0);
}

TEST_F(LabStep, PlaceOrderWritesOneOrderAndItsOutboxRowPerRun) {
  step_ok("init");
  for (int run = 1; run <= 3; ++run) {
    step_ok("place_order");
    EXPECT_EQ(app_db_number("SELECT COUNT(*) FROM orders"), run);
    EXPECT_EQ(app_db_number("SELECT COUNT(*) FROM outbox"), run);
  }
  // Each order has its OrderPlaced row, still PENDING: no relay ran.
  EXPECT_EQ(app_db_number("SELECT COUNT(*) FROM outbox o JOIN orders r "
                          "ON o.aggregate_id = 'order-' || r.id "
                          "WHERE o.event_type = 'OrderPlaced' AND o.seq = 1 "
                          "AND o.status = 'PENDING'"),
            3);
  EXPECT_EQ(queue_length(), 0);
}

TEST_F(LabStep, RelayPublishesPendingRowsOnceEvenWhenRunTwice) {
  step_ok("init");
  step_ok("place_order");
  step_ok("place_order");
  step_ok("relay");
  EXPECT_EQ(queue_length(), 2);
  EXPECT_EQ(app_db_number("SELECT COUNT(*) FROM outbox WHERE status = "
                          "'PUBLISHED'"),
            2);
  std::set<std::string> in_queue;
  for (const auto& e : decoded(queue()))
    in_queue.insert(e.event_id);
  SQLite::Database db{dir_ + "/app.db", SQLite::OPEN_READWRITE};
  SQLite::Statement ids{db, "SELECT event_id FROM outbox"};
  std::set<std::string> in_outbox;
  while (ids.executeStep())
    in_outbox.insert(ids.getColumn(0).getString());
  EXPECT_EQ(in_queue, in_outbox);
  step_ok("relay");
  EXPECT_EQ(queue_length(), 2);
}

TEST_F(LabStep, OrderCheckSeesSeqOrderDespiteEqualTimestamps) {
  step_ok("init");
  auto r = lab_step("order_check");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(lines_of("order_check.out"), std::vector<std::string>{"ORDER OK"});
  // One aggregate, four events, one timestamp.
  EXPECT_EQ(app_db_number("SELECT COUNT(DISTINCT aggregate_id) FROM outbox"),
            1);
  EXPECT_EQ(app_db_number("SELECT COUNT(*) FROM outbox"), 4);
  EXPECT_EQ(app_db_number("SELECT COUNT(DISTINCT created_at) FROM outbox"), 1);
  std::vector<std::int64_t> seqs;
  for (const auto& e : decoded(queue()))
    seqs.push_back(e.seq);
  EXPECT_EQ(seqs, (std::vector<std::int64_t>{1, 2, 3, 4}));
}

TEST_F(LabStep, OrderCheckReportsEventsOutOfOrder) {
  step_ok("init");
  // Someone else's aggregate entered the queue seq 2 before seq 1.
  for (std::int64_t seq : {2, 1})
    redis().command({"RPUSH", "outbox.events",
                     broker::encode({"x-" + std::to_string(seq), "agg-x", seq,
                                     "T", "{}", 0, 0})});
  auto r = lab_step("order_check");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.err, testing::HasSubstr("agg-x"));
  auto lines = lines_of("order_check.out");
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines[0], "ORDER OK");
}

TEST_F(LabStep, RelayCrashEnqueuesTheSameEventTwice) {
  step_ok("init");
  ASSERT_TRUE(step_says("relay_crash", "Waiting"));
  auto lines = lines_of("atleastonce.out");
  ASSERT_EQ(lines.size(), 1u);
  std::smatch m;
  ASSERT_TRUE(std::regex_match(lines[0], m,
                               std::regex{"DUPLICATE event_id=(\\S+) count=2"}))
      << lines[0];
  auto id = m[1].str();
  int copies = 0;
  for (const auto& e : decoded(queue()))
    copies += e.event_id == id ? 1 : 0;
  EXPECT_EQ(copies, 2);
  // The takeover acknowledged it: nothing is left leased.
  EXPECT_EQ(app_db_number("SELECT COUNT(*) FROM outbox WHERE event_id = '" +
                          id + "' AND status = 'PUBLISHED'"),
            1);
}

TEST_F(LabStep, ConsumerAbsorbsDuplicatesAndChangesNothingTheSecondTime) {
  step_ok("init");
  step_ok("place_order");
  step_ok("relay");
  step_ok("relay_crash");
  ASSERT_EQ(queue_length(), 3); // 2 unique events, one of them twice
  step_ok("consumer");
  EXPECT_EQ(queue_length(), 0);
  EXPECT_EQ(processed_size(), 2);
  EXPECT_EQ(processed_size(), app_db_number("SELECT COUNT(*) FROM outbox"));
  auto duplicates = redis().command({"HGET", "outbox.counters", "duplicates"});
  EXPECT_EQ(broker::reply_text(*duplicates), "1");
  auto reserved = redis().command({"HGETALL", "effects:inventory.reserved"});
  EXPECT_EQ(reserved->elements, 4u); // two SKUs, each reserved once
  step_ok("consumer");
  EXPECT_EQ(processed_size(), 2);
  EXPECT_EQ(broker::reply_text(
                *redis().command({"HGET", "outbox.counters", "consumed"})),
            "2");
}

TEST_F(LabStep, ReportHasTheFourLinesFromTheStores) {
  step_ok("init");
  step_ok("place_order");
  step_ok("relay");
  step_ok("relay_crash");
  step_ok("report"); // before any consumer: everything still queued
  auto lines = lines_of("report.txt");
  EXPECT_EQ(lines,
            (std::vector<std::string>{"orders=2", "outbox=2", "enqueued=3",
                                      "processed_unique=0"}));
  step_ok("consumer");
  step_ok("report");
  lines = lines_of("report.txt");
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0], "orders=" + std::to_string(app_db_number(
                                      "SELECT COUNT(*) FROM orders")));
  EXPECT_EQ(lines[1], "outbox=" + std::to_string(app_db_number(
                                      "SELECT COUNT(*) FROM outbox")));
  EXPECT_EQ(lines[2], "enqueued=3");
  EXPECT_EQ(lines[3], "processed_unique=" + std::to_string(processed_size()));
}

} // namespace
} // namespace outbox::test
