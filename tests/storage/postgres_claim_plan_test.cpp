// The claim's plan where the statistics lie (docs/postgres-protocol.md,
// proof f): analyzed while nothing was unpublished, then thousands of
// unpublished rows and dead tuples since. storage/postgres/checks/
// claim_plan.sql, the check the proofs run with psql, run here on a real
// cluster: in custom and generic plans the claim's walk reads only the
// partial index of unpublished rows and locks rows by id, never scanning
// the published history.

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

std::string source_text(const std::string& relative) {
  std::ifstream in{source_dir() + "/" + relative};
  std::ostringstream text;
  text << in.rdbuf();
  EXPECT_FALSE(text.str().empty()) << "cannot read " << relative;
  return text.str();
}

using result = std::unique_ptr<PGresult, decltype(&PQclear)>;

/// Runs `sql` (one or more statements); the last statement's result.
result run(PGconn* conn, const std::string& sql, const std::string& what) {
  result r{PQexec(conn, sql.c_str()), &PQclear};
  auto status = PQresultStatus(r.get());
  EXPECT_TRUE(status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK)
      << what << ": " << PQresultErrorMessage(r.get());
  return r;
}

TEST(StoragePostgresClaimPlan, TheWalkStaysOnUnpublishedRowsWhenStatsLie) {
  pg_server pg;
  storage::db_options options;
  options.path = pg.uri();
  storage::connect(options, storage::open_mode::migrated);

  std::unique_ptr<PGconn, decltype(&PQfinish)> conn{
      PQconnectdb(pg.uri().c_str()), &PQfinish};
  ASSERT_EQ(PQstatus(conn.get()), CONNECTION_OK) << PQerrorMessage(conn.get());
  // One statement at a time: a multi-statement string is one transaction,
  // where VACUUM cannot run. Its statements end at line ends.
  auto stale = source_text("storage/postgres/proofs/gen_stale.sql");
  for (std::size_t at = 0, end; at < stale.size(); at = end + 2) {
    end = stale.find(";\n", at);
    if (end == std::string::npos)
      break;
    run(conn.get(), stale.substr(at, end - at + 1), "gen_stale.sql");
  }
  run(conn.get(), source_text("storage/postgres/protocol.sql"), "protocol.sql");
  auto plans =
      run(conn.get(), source_text("storage/postgres/checks/claim_plan.sql"),
          "claim_plan.sql");
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
