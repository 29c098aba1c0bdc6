// read_publications' plan (the rows `outbox trim` judges a page of
// records by): storage/postgres/checks/read_publications_plan.sql, run on
// a real cluster over an analyzed outbox large enough for a sequential
// scan to look cheap, in custom and generic plans. Every lookup must stay
// an index probe: a scan of the outbox per page made a trim's cost grow
// with the table.

#include "storage/database.hpp"
#include "support/build_paths.hpp"
#include "support/pg_server.hpp"

#include <gtest/gtest.h>
#include <libpq-fe.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <string>

namespace outbox::test {
namespace {

using pg_result = std::unique_ptr<PGresult, decltype(&PQclear)>;

/// Runs `sql` (one or more statements); the last statement's result.
pg_result run_sql(PGconn* conn, const std::string& sql,
                  const std::string& what) {
  pg_result r{PQexec(conn, sql.c_str()), &PQclear};
  auto status = PQresultStatus(r.get());
  EXPECT_TRUE(status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK)
      << what << ": " << PQresultErrorMessage(r.get());
  return r;
}

std::string file_text(const std::string& relative) {
  std::ifstream in{source_dir() + "/" + relative};
  std::ostringstream text;
  text << in.rdbuf();
  EXPECT_FALSE(text.str().empty()) << "cannot read " << relative;
  return text.str();
}

TEST(StoragePostgresPublicationsPlan, EveryLookupIsAnIndexProbe) {
  pg_server pg;
  storage::db_options options;
  options.path = pg.uri();
  storage::connect(options, storage::open_mode::migrated);

  std::unique_ptr<PGconn, decltype(&PQfinish)> conn{
      PQconnectdb(pg.uri().c_str()), &PQfinish};
  ASSERT_EQ(PQstatus(conn.get()), CONNECTION_OK) << PQerrorMessage(conn.get());
  // 50,000 published orders, seqs set by hand (the seq trigger allocates
  // one row at a time), then statistics that know them.
  run_sql(conn.get(),
          "ALTER TABLE outbox DISABLE TRIGGER outbox_allocate_seq;"
          "INSERT INTO outbox (event_id, aggregate_id, seq, event_type,"
          " payload, status, created_at, published_at)"
          " SELECT md5('plan-' || i)::uuid, 'plan-a' || i, 1, 'OrderPlaced',"
          " '{}', 'PUBLISHED', now(), now()"
          " FROM generate_series(1, 50000) AS i;"
          "ALTER TABLE outbox ENABLE TRIGGER outbox_allocate_seq;",
          "fill");
  run_sql(conn.get(), "ANALYZE outbox", "analyze");
  run_sql(conn.get(), file_text("storage/postgres/protocol.sql"),
          "protocol.sql");
  auto plans =
      run_sql(conn.get(),
              file_text("storage/postgres/checks/read_publications_plan.sql"),
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
