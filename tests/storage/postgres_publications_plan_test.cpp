// read_publications' plan (the rows `outbox trim` judges a page of
// records by): storage/postgres/checks/read_publications_plan.sql, run on
// a real cluster over an analyzed outbox large enough for a sequential
// scan to look cheap, in custom and generic plans. Every lookup must stay
// an index probe: a scan of the outbox per page made a trim's cost grow
// with the table.

#include "storage/postgres/sql_files.hpp"
#include "tests/storage/postgres_plan_check.hpp"

#include <string>

namespace outbox::test {
namespace {

TEST(StoragePostgresPublicationsPlan, EveryLookupIsAnIndexProbe) {
  plan_check_cluster cluster;
  // 50,000 published orders, seqs set by hand (the seq trigger allocates
  // one row at a time), then statistics that know them.
  cluster.run(
      "ALTER TABLE outbox DISABLE TRIGGER outbox_allocate_seq;"
      "INSERT INTO outbox (event_id, aggregate_id, seq, event_type,"
      " payload, status, created_at, published_at)"
      " SELECT md5('plan-' || i)::uuid, 'plan-a' || i, 1, 'OrderPlaced',"
      " '{}', 'PUBLISHED', now(), now()"
      " FROM generate_series(1, 50000) AS i;"
      "ALTER TABLE outbox ENABLE TRIGGER outbox_allocate_seq;",
      "fill");
  cluster.run("ANALYZE outbox", "analyze");
  cluster.run(storage::postgres::sql_files::protocol, "protocol");
  auto plans = cluster.run(plan_check_text("read_publications_plan.sql"),
                           "read_publications_plan.sql");
  ASSERT_EQ(PQntuples(plans.get()), 2) << "one row per plan cache mode";
  int probes_only = PQfnumber(plans.get(), "probes_only");
  ASSERT_GE(probes_only, 0);
  for (int row = 0; row < 2; ++row)
    EXPECT_STREQ(PQgetvalue(plans.get(), row, probes_only), "t")
        << PQgetvalue(plans.get(), row, 0) << ":\n"
        << PQgetvalue(plans.get(), row, 1);
}

} // namespace
} // namespace outbox::test
