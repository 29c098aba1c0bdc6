#pragma once

// What the plan checks share (storage/postgres/checks/*.sql run on a real
// cluster, as the proofs run them with psql): a migrated cluster of the
// test's own, a connection to it, the project's SQL files, and statements
// whose failure fails the test.

#include "storage/database.hpp"
#include "support/build_paths.hpp"
#include "support/pg_server.hpp"

#include <gtest/gtest.h>
#include <libpq-fe.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>

namespace outbox::test {

using pg_result = std::unique_ptr<PGresult, decltype(&PQclear)>;

/// A file of the source tree, e.g. "storage/postgres/checks/claim_plan.sql".
inline std::string source_text(const std::string& relative) {
  std::ifstream in{source_dir() + "/" + relative};
  std::ostringstream text;
  text << in.rdbuf();
  EXPECT_FALSE(text.str().empty()) << "cannot read " << relative;
  return text.str();
}

/// A plan check of storage/postgres/checks/ (e.g. "claim_plan.sql") after
/// plan_lines.sql, the function every check calls: one text, one PQexec.
inline std::string plan_check_text(const std::string& check) {
  return source_text("storage/postgres/checks/plan_lines.sql") +
         source_text("storage/postgres/checks/" + check);
}

/// A cluster `outbox init` migrated, and one connection to it.
class plan_check_cluster {
public:
  plan_check_cluster() {
    storage::db_options options;
    options.path = pg_.uri();
    storage::connect(options, storage::open_mode::migrated);
    conn_.reset(PQconnectdb(pg_.uri().c_str()));
    if (PQstatus(conn_.get()) != CONNECTION_OK)
      throw std::runtime_error(PQerrorMessage(conn_.get()));
  }

  /// Runs `sql` (one or more statements); the last statement's result.
  pg_result run(const std::string& sql, const std::string& what) {
    pg_result r{PQexec(conn_.get(), sql.c_str()), &PQclear};
    auto status = PQresultStatus(r.get());
    EXPECT_TRUE(status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK)
        << what << ": " << PQresultErrorMessage(r.get());
    return r;
  }

private:
  pg_server pg_;
  std::unique_ptr<PGconn, decltype(&PQfinish)> conn_{nullptr, &PQfinish};
};

} // namespace outbox::test
