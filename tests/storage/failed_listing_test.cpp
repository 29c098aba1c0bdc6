#include "storage/failed_listing.hpp"

#include "storage/database.hpp"
#include "storage/outbox_views.hpp"
#include "tests/storage/contract_fixture.hpp"

#include <string>
#include <vector>

// Every FAILED row of a real database, read page by page: a last page that
// is short, full or empty ends the walk alike, and rows of other statuses
// between them are skipped.

namespace outbox::test {
namespace {

class StorageFailedListing : public contract_fixture {
protected:
  /// `failed` FAILED rows (named f1, f2, ...), each followed by a PENDING
  /// row.
  void rows(int failed) {
    auto count = std::to_string(2 * failed);
    exec("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n"
         " WHERE i < " +
         count +
         ") INSERT INTO outbox (event_id, aggregate_id, seq, event_type,"
         " payload, status, attempts, last_error, created_at) SELECT " +
         sql_->event_id(
             "CASE i % 2 WHEN 1 THEN 'f' ELSE 'p' END || ((i + 1) / 2)") +
         ", 'a', i, 'OrderPlaced', '{}',"
         " CASE i % 2 WHEN 1 THEN 'FAILED' ELSE 'PENDING' END,"
         " 3, CASE i % 2 WHEN 1 THEN 'boom' END, " +
         sql_->time_of("i") + " FROM n WHERE i <= " + count);
    sql_->keep_heads();
  }

  std::vector<storage::failed_row> all(int page_size) {
    auto db = connect(storage::open_mode::existing);
    return storage::all_failed_rows(*db->views(), page_size);
  }
};

OUTBOX_ON_BOTH_BACKENDS(StorageFailedListing);

TEST_P(StorageFailedListing, ReadsEveryPageOldestFirst) {
  // Fewer than a page, a short last page, and a last page that is full.
  for (int failed : {0, 2, 7, 9}) {
    SCOPED_TRACE(failed);
    exec("DELETE FROM outbox");
    rows(failed);
    auto found = all(3);
    ASSERT_EQ(found.size(), static_cast<std::size_t>(failed));
    for (int i = 0; i < failed; ++i) {
      EXPECT_EQ(found[i].event_id, event_id("f" + std::to_string(i + 1)));
      EXPECT_EQ(found[i].last_error, "boom");
      EXPECT_EQ(found[i].attempts, 3);
    }
  }
}

TEST_P(StorageFailedListing, ReadsFiveHundredAPageByDefault) {
  rows(501);
  auto db = connect(storage::open_mode::existing);
  EXPECT_EQ(storage::all_failed_rows(*db->views()).size(), 501u);
}

} // namespace
} // namespace outbox::test
