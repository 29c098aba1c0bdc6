// The tests' own PostgreSQL: a real cluster per fixture, reachable by its
// URI, crashed and restarted on the same port and data, and gone (process
// reaped, folder removed) with the fixture.

#include "support/pg_server.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <libpq-fe.h>

#include <signal.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace outbox::test {
namespace {

using ::testing::HasSubstr;

using connection = std::unique_ptr<PGconn, decltype(&PQfinish)>;

connection connect(const std::string& uri) {
  return {PQconnectdb(uri.c_str()), &PQfinish};
}

/// The first value of the first row of `sql`, or "error: ..." .
std::string value_of(PGconn* conn, const std::string& sql) {
  std::unique_ptr<PGresult, decltype(&PQclear)> result{
      PQexec(conn, sql.c_str()), &PQclear};
  auto status = PQresultStatus(result.get());
  if (status == PGRES_COMMAND_OK)
    return "";
  if (status != PGRES_TUPLES_OK || PQntuples(result.get()) < 1)
    return std::string("error: ") + PQerrorMessage(conn);
  return PQgetvalue(result.get(), 0, 0);
}

/// True while `pid` names a process (a zombie included: not yet reaped).
bool exists(pid_t pid) {
  return ::kill(pid, 0) == 0 || errno != ESRCH;
}

/// The processes whose parent is `pid` (the postmaster's children).
std::vector<pid_t> children_of(pid_t pid) {
  std::vector<pid_t> found;
  for (const auto& entry : std::filesystem::directory_iterator{"/proc"}) {
    auto name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos)
      continue;
    std::ifstream stat{entry.path() / "stat"};
    std::string text{std::istreambuf_iterator<char>{stat}, {}};
    auto close = text.rfind(')');
    if (close == std::string::npos)
      continue;
    std::istringstream rest{text.substr(close + 2)};
    char state = 0;
    long parent = 0;
    if (rest >> state >> parent && parent == pid)
      found.push_back(static_cast<pid_t>(std::stol(name)));
  }
  return found;
}

TEST(SupportPgServer, AnswersOnItsUriAsOutbox) {
  pg_server pg;
  EXPECT_EQ(pg.uri(), "postgresql://outbox@127.0.0.1:" +
                          std::to_string(pg.port()) + "/outbox");
  auto conn = connect(pg.uri());
  ASSERT_EQ(PQstatus(conn.get()), CONNECTION_OK) << PQerrorMessage(conn.get());
  EXPECT_EQ(value_of(conn.get(), "SELECT 1"), "1");
  EXPECT_EQ(value_of(conn.get(), "SELECT current_user"), "outbox");
  EXPECT_EQ(value_of(conn.get(), "SELECT current_database()"), "outbox");
  EXPECT_EQ(value_of(conn.get(), "SHOW listen_addresses"), "127.0.0.1");
  EXPECT_EQ(value_of(conn.get(), "SHOW server_version_num").substr(0, 2), "15");
}

TEST(SupportPgServer, CrashAndRestartKeepPortAndCommittedData) {
  pg_server pg;
  auto uri = pg.uri();
  {
    auto conn = connect(uri);
    ASSERT_EQ(PQstatus(conn.get()), CONNECTION_OK)
        << PQerrorMessage(conn.get());
    ASSERT_EQ(value_of(conn.get(), "CREATE TABLE kept (v int)"), "");
    ASSERT_EQ(value_of(conn.get(), "INSERT INTO kept VALUES (42)"), "");
  }
  auto before = pg.pid();
  auto open = connect(uri);
  ASSERT_EQ(PQstatus(open.get()), CONNECTION_OK);

  pg.crash();
  EXPECT_FALSE(pg.running());
  EXPECT_FALSE(exists(before)) << "the postmaster was not reaped";
  EXPECT_THAT(value_of(open.get(), "SELECT 1"), HasSubstr("error: "));
  auto refused = connect(uri);
  EXPECT_NE(PQstatus(refused.get()), CONNECTION_OK);

  pg.restart();
  ASSERT_TRUE(pg.running());
  EXPECT_NE(pg.pid(), before);
  EXPECT_EQ(pg.uri(), uri);
  auto again = connect(uri);
  ASSERT_EQ(PQstatus(again.get()), CONNECTION_OK)
      << PQerrorMessage(again.get());
  EXPECT_EQ(value_of(again.get(), "SELECT v FROM kept"), "42");

  // A restart of a running server: a clean stop, then the same again.
  auto second = pg.pid();
  pg.restart();
  EXPECT_FALSE(exists(second));
  auto third = connect(uri);
  ASSERT_EQ(PQstatus(third.get()), CONNECTION_OK)
      << PQerrorMessage(third.get());
  EXPECT_EQ(value_of(third.get(), "SELECT v FROM kept"), "42");
}

TEST(SupportPgServer, LeavesNoProcessNorFolder) {
  pid_t postmaster = -1;
  std::vector<pid_t> children;
  std::string dir;
  {
    pg_server pg;
    postmaster = pg.pid();
    dir = pg.dir();
    auto conn = connect(pg.uri());
    ASSERT_EQ(PQstatus(conn.get()), CONNECTION_OK);
    ASSERT_EQ(value_of(conn.get(), "SELECT 1"), "1");
    children = children_of(postmaster);
    // Its checkpointer, writers, launchers and this session's backend.
    EXPECT_GE(children.size(), 3u);
    EXPECT_TRUE(std::filesystem::exists(dir + "/data/PG_VERSION"));
  }
  EXPECT_FALSE(exists(postmaster)) << "the postmaster was not reaped";
  for (auto child : children)
    EXPECT_FALSE(exists(child)) << "pid " << child << " outlived the fixture";
  EXPECT_FALSE(std::filesystem::exists(dir)) << dir;
}

} // namespace
} // namespace outbox::test
