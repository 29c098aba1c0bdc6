#include "tests/cli/audit_fixture.hpp"

#include <SQLiteCpp/Database.h>
#include <gmock/gmock.h>

#include <string>

// A command that works in short transactions and is stopped part-way keeps
// what it committed and says so with exit 4 (partly done); stopped before
// its first commit it is the plain failure (exit 1, or 2 for a refusal). The
// failure is a real SQLite one: a trigger in the test's database refuses to
// delete one row.

namespace outbox::test {
namespace {

class CliPartlyDone : public CliAudit {
protected:
  /// Two PUBLISHED rows, published a day ago; the event_ids in rowid order.
  std::vector<std::string> two_old_published_rows() {
    place("apple", 1);
    place("pear", 2);
    relay_all();
    SQLite::Database db{db_path(), SQLite::OPEN_READWRITE};
    db.exec("UPDATE outbox SET created_at = created_at - 86400000, "
            "published_at = published_at - 86400000");
    std::vector<std::string> ids;
    SQLite::Statement rows{db, "SELECT event_id FROM outbox ORDER BY rowid"};
    while (rows.executeStep())
      ids.push_back(rows.getColumn(0).getString());
    return ids;
  }

  void refuse_to_delete(const std::string& event_id) {
    SQLite::Database db{db_path(), SQLite::OPEN_READWRITE};
    db.exec("CREATE TRIGGER test_refuses BEFORE DELETE ON outbox WHEN "
            "OLD.event_id = '" +
            event_id +
            "' BEGIN SELECT RAISE(ABORT, 'refused by the test'); "
            "END");
  }

  /// Two old published rows, the `refused`-th of which (in rowid order) the
  /// trigger keeps.
  void two_old_rows_one_refused(std::size_t refused) {
    auto ids = two_old_published_rows();
    ASSERT_EQ(ids.size(), 2u);
    refuse_to_delete(ids[refused]);
  }

  /// A purge of them one row a batch; the refusal reaches stderr whenever
  /// it stops.
  process_result purge_one_row_a_batch() {
    auto r =
        outbox_r({"purge", "--published-older-than", "1h", "--batch", "1"});
    EXPECT_THAT(r.err, testing::HasSubstr("refused by the test"));
    return r;
  }
};

TEST_F(CliPartlyDone, PurgeStoppedAfterACommittedBatchExits4) {
  ASSERT_NO_FATAL_FAILURE(two_old_rows_one_refused(1));

  auto r = purge_one_row_a_batch();
  EXPECT_EQ(r.exit_code, 4) << r.err;
  EXPECT_THAT(r.err, testing::HasSubstr(
                         "outbox purge: partly done: stopped after 1 committed "
                         "batch (1 row deleted); run it again to finish"));
  EXPECT_EQ(count("outbox"), 1) << "the first batch stays committed";
}

TEST_F(CliPartlyDone, PurgeStoppedBeforeAnyCommitIsThePlainFailure) {
  ASSERT_NO_FATAL_FAILURE(two_old_rows_one_refused(0));

  auto r = purge_one_row_a_batch();
  // The store reports a refusing trigger as invalid input (exit 2; a lock
  // would be 1): nothing was done, so not 4.
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, testing::Not(testing::HasSubstr("partly done")));
  EXPECT_EQ(count("outbox"), 2);
}

} // namespace
} // namespace outbox::test
