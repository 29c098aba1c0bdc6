// The claim's plan where the statistics lie (docs/postgres-protocol.md,
// proof f): analyzed while nothing was unpublished, then thousands of
// unpublished rows and dead tuples since. storage/postgres/checks/
// claim_plan.sql, the check the proofs run with psql, run here on a real
// cluster: in custom and generic plans the claim's walk reads only the
// partial index of unpublished rows and locks rows by id, never scanning
// the published history.

#include "storage/postgres/sql_files.hpp"
#include "tests/storage/postgres_plan_check.hpp"

#include <string>

namespace outbox::test {
namespace {

TEST(StoragePostgresClaimPlan, TheWalkStaysOnUnpublishedRowsWhenStatsLie) {
  plan_check_cluster cluster;
  // One statement at a time: a multi-statement string is one transaction,
  // where VACUUM cannot run. Its statements end at line ends.
  auto stale = source_text("storage/postgres/proofs/gen_stale.sql");
  for (std::size_t at = 0, end; at < stale.size(); at = end + 2) {
    end = stale.find(";\n", at);
    if (end == std::string::npos)
      break;
    cluster.run(stale.substr(at, end - at + 1), "gen_stale.sql");
  }
  cluster.run(storage::postgres::sql_files::protocol, "protocol");
  auto plans = cluster.run(plan_check_text("claim_plan.sql"), "claim_plan.sql");
  ASSERT_EQ(PQntuples(plans.get()), 2) << "one row per plan cache mode";
  for (int row = 0; row < 2; ++row) {
    std::string mode = PQgetvalue(plans.get(), row, 0);
    std::string plan = PQgetvalue(plans.get(), row, 1);
    for (const char* check :
         {"walk_on_unpublished", "locks_by_id", "no_seq_scan"}) {
      int column = PQfnumber(plans.get(), check);
      ASSERT_GE(column, 0) << check;
      EXPECT_STREQ(PQgetvalue(plans.get(), row, column), "t")
          << check << " in " << mode << ":\n"
          << plan;
    }
  }
}

} // namespace
} // namespace outbox::test
