#include "storage/purge_run.hpp"

#include "storage/database.hpp"
#include "storage/retention_store.hpp"
#include "storage/store_error.hpp"
#include "tests/storage/contract_fixture.hpp"

#include <string>

// A whole purge over a real database: the sums of its batches, and a
// failing batch before or after a commit. The failure is a real one of the
// database: a trigger refuses to delete one row.

namespace outbox::test {
namespace {

class StoragePurgeRun : public contract_fixture {
protected:
  /// Seven PUBLISHED rows published at 10, each the only row of its
  /// aggregate, then one published at 500 (after the cutoff of 100).
  void SetUp() override {
    exec("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n"
         " WHERE i < 8) INSERT INTO outbox (event_id, aggregate_id, seq,"
         " event_type, payload, status, created_at, published_at)"
         " SELECT " +
         sql_->event_id("'e' || i") +
         ", 'a' || i, 1, 'OrderPlaced', '{}', 'PUBLISHED', " +
         sql_->time_of("i * 10") + ", " +
         sql_->time_of("CASE WHEN i < 8 THEN 10 ELSE 500 END") + " FROM n");
    sql_->keep_heads();
  }

  storage::purge_totals purge(int batch_limit) {
    auto db = connect(storage::open_mode::existing);
    return storage::purge_published_before(*db->retention(), 100, batch_limit);
  }

  void refuse_to_delete(const std::string& name) {
    auto refused = "'" + event_id(name) + "'";
    if (postgres())
      exec("CREATE FUNCTION test_refuses() RETURNS trigger LANGUAGE plpgsql"
           " AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$;"
           " CREATE TRIGGER test_refuses BEFORE DELETE ON outbox FOR EACH ROW"
           " WHEN (OLD.event_id = " +
           refused + ") EXECUTE FUNCTION test_refuses()");
    else
      exec("CREATE TRIGGER test_refuses BEFORE DELETE ON outbox WHEN "
           "OLD.event_id = " +
           refused + " BEGIN SELECT RAISE(ABORT, 'refused by the test'); END");
  }

  std::int64_t rows_left() { return scalar("SELECT COUNT(*) FROM outbox"); }
};

OUTBOX_ON_BOTH_BACKENDS(StoragePurgeRun);

TEST_P(StoragePurgeRun, SumsEveryBatchUntilTheWalkIsDone) {
  auto totals = purge(3);
  EXPECT_EQ(totals.deleted, 7);
  EXPECT_EQ(totals.batches, 3);
  EXPECT_EQ(totals.request_keys, 0);
  EXPECT_EQ(totals.aggregate_heads, 7);
  EXPECT_FALSE(totals.stopped_by.has_value());
  EXPECT_EQ(rows_left(), 1) << "the row published after the cutoff stays";
}

TEST_P(StoragePurgeRun, AFirstBatchThatFailsThrowsWithNothingCommitted) {
  refuse_to_delete("e1");
  try {
    purge(3);
    ADD_FAILURE() << "no error";
  } catch (const storage::store_error& e) {
    EXPECT_NE(std::string{e.what()}.find("refused by the test"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(rows_left(), 8);
}

TEST_P(StoragePurgeRun, ALaterBatchThatFailsStopsPartWayKeepingTheCommitted) {
  refuse_to_delete("e4");
  auto totals = purge(3);
  EXPECT_EQ(totals.batches, 1);
  EXPECT_EQ(totals.deleted, 3);
  EXPECT_EQ(totals.aggregate_heads, 3);
  ASSERT_TRUE(totals.stopped_by.has_value());
  EXPECT_NE(std::string{totals.stopped_by->what()}.find("refused by the test"),
            std::string::npos)
      << totals.stopped_by->what();
  EXPECT_EQ(rows_left(), 5) << "the first batch stays committed";
}

} // namespace
} // namespace outbox::test
