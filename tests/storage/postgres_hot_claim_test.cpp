// A claim is a HOT update on PostgreSQL (storage/postgres/schema_v9.sql):
// no index of the outbox names a column the claim changes, in its key or
// its predicate, so a claimed row whose page has room gets a new heap
// tuple and no index entry. An index that named status or owner again
// would make every claim write an entry into every index of the table.

#include "storage/postgres/sql_files.hpp"
#include "tests/storage/postgres_plan_check.hpp"

#include <string>

namespace outbox::test {
namespace {

TEST(StoragePostgresHotClaim, NoIndexOfTheOutboxNamesAColumnTheClaimChanges) {
  plan_check_cluster cluster;
  auto indexes = cluster.run(
      "SELECT indexrelid::regclass::text, pg_get_indexdef(indexrelid)"
      " FROM pg_index WHERE indrelid = 'outbox'::regclass ORDER BY 1",
      "the outbox's indexes");
  ASSERT_GE(PQntuples(indexes.get()), 4) << "the outbox has its indexes";
  for (int row = 0; row < PQntuples(indexes.get()); ++row) {
    std::string definition = PQgetvalue(indexes.get(), row, 1);
    for (const char* column :
         {"status", "owner", "lease_until", "lease_epoch", "attempts"})
      EXPECT_EQ(definition.find(column), std::string::npos)
          << column << " in " << definition;
  }
}

TEST(StoragePostgresHotClaim, AClaimOfRowsWithRoomOnTheirPageWritesNoIndex) {
  plan_check_cluster cluster;
  cluster.run("SELECT outbox_append('agg-' || i, 'T', '{}')"
              " FROM generate_series(1, 10) AS i",
              "ten events");
  cluster.run(storage::postgres::sql_files::protocol, "protocol");
  auto claimed = cluster.run(
      "EXECUTE claim('relay-a', NULL, 30000, 256, 1024, '', 10)", "a claim");
  ASSERT_EQ(PQntuples(claimed.get()), 10);
  // This session's counts reach pg_stat_user_tables when its statistics
  // are flushed: forced at the end of the next transaction.
  cluster.run("SELECT pg_stat_force_next_flush()", "flush");
  auto counts = cluster.run("SELECT n_tup_upd, n_tup_hot_upd FROM "
                            "pg_stat_user_tables WHERE relname = 'outbox'",
                            "update counts");
  ASSERT_EQ(PQntuples(counts.get()), 1);
  EXPECT_STREQ(PQgetvalue(counts.get(), 0, 0), "10");
  EXPECT_STREQ(PQgetvalue(counts.get(), 0, 1), "10") << "HOT updates";
}

} // namespace
} // namespace outbox::test
