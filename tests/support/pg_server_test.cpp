// The tests' own PostgreSQL: a real cluster per fixture, reachable by its
// URI and its password only, crashed and restarted on the same port and
// data, and gone (process reaped, folder and shared memory removed) with
// the fixture.

#include "support/pg_server.hpp"

#include "support/file_checks.hpp"
#include "support/pg_programs.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <libpq-fe.h>

#include <grp.h>
#include <signal.h>
#include <sys/stat.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace outbox::test {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::StartsWith;

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

/// The files under /dev/shm that the postmaster `pid` or its children map.
std::set<std::string> shm_files_mapped_by(pid_t pid) {
  std::set<std::string> found;
  auto processes = children_of(pid);
  processes.push_back(pid);
  for (auto process : processes) {
    std::ifstream maps{"/proc/" + std::to_string(process) + "/maps"};
    for (std::string line; std::getline(maps, line);)
      if (auto at = line.find(" /dev/shm/"); at != std::string::npos)
        found.insert(line.substr(at + 1));
  }
  return found;
}

/// Runs a parallel query, whose workers share dynamic shared memory.
void run_parallel_query(PGconn* conn) {
  for (auto sql :
       {"CREATE TABLE numbers AS SELECT generate_series(1, 50000) n",
        "SET force_parallel_mode = on", "SET parallel_setup_cost = 0",
        "SET parallel_tuple_cost = 0", "SET min_parallel_table_scan_size = 0"})
    ASSERT_EQ(value_of(conn, sql), "") << sql;
  EXPECT_EQ(value_of(conn, "SELECT count(*) FROM numbers"), "50000");
}

TEST(SupportPgServer, AnswersOnItsUriAsOutbox) {
  pg_server pg;
  EXPECT_EQ(pg.passfile(), pg.dir() + "/pgpass");
  EXPECT_EQ(pg.uri(),
            "postgresql://outbox@127.0.0.1:" + std::to_string(pg.port()) +
                "/outbox?passfile=" + pg.passfile());
  auto conn = connect(pg.uri());
  ASSERT_EQ(PQstatus(conn.get()), CONNECTION_OK) << PQerrorMessage(conn.get());
  EXPECT_EQ(value_of(conn.get(), "SELECT 1"), "1");
  EXPECT_EQ(value_of(conn.get(), "SELECT current_user"), "outbox");
  EXPECT_EQ(value_of(conn.get(), "SELECT current_database()"), "outbox");
  EXPECT_EQ(value_of(conn.get(), "SHOW listen_addresses"), "127.0.0.1");
  EXPECT_EQ(value_of(conn.get(), "SHOW unix_socket_directories"), "");
  EXPECT_EQ(value_of(conn.get(), "SHOW server_version_num").substr(0, 2), "15");
  EXPECT_EQ(pg::uri_escape("/a b/c%d?e"), "/a%20b/c%25d%3Fe");
}

TEST(SupportPgServer, LetsOutboxInWithItsPasswordOnly) {
  pg_server pg;
  // The password file: ours, 0600, in libpq's format.
  struct stat passfile {};
  ASSERT_EQ(::stat(pg.passfile().c_str(), &passfile), 0);
  EXPECT_EQ(passfile.st_uid, ::geteuid());
  EXPECT_EQ(passfile.st_mode & 07777, 0600u);
  EXPECT_THAT(text_of(pg.passfile()),
              MatchesRegex("\\*:\\*:\\*:outbox:[0-9a-f]{32}\n"));
  // As root the server's user gets through the directory, no one else.
  if (::geteuid() == 0) {
    struct stat dir {};
    ASSERT_EQ(::stat(pg.dir().c_str(), &dir), 0);
    EXPECT_EQ(dir.st_mode & 07777, 0710u);
    EXPECT_EQ(dir.st_gid, ::getgrnam("postgres")->gr_gid);
  } else {
    EXPECT_EQ(mode_of(pg.dir()), 0700);
  }

  auto wrong =
      connect("postgresql://outbox@127.0.0.1:" + std::to_string(pg.port()) +
              "/outbox?password=wrong&passfile=" + pg.passfile());
  EXPECT_NE(PQstatus(wrong.get()), CONNECTION_OK);
  EXPECT_THAT(PQerrorMessage(wrong.get()),
              HasSubstr("password authentication failed"));

  auto conn = connect(pg.uri());
  ASSERT_EQ(PQstatus(conn.get()), CONNECTION_OK) << PQerrorMessage(conn.get());
  EXPECT_EQ(value_of(conn.get(),
                     "SELECT rolpassword LIKE 'SCRAM-SHA-256$%' FROM pg_authid"
                     " WHERE rolname = 'outbox'"),
            "t");
  // Only scram lines, for outbox, over TCP.
  EXPECT_EQ(value_of(conn.get(),
                     "SELECT string_agg(type || ' ' || array_to_string("
                     "user_name, ',') || ' ' || address || ' ' || auth_method,"
                     " '; ') FROM pg_hba_file_rules"),
            "host outbox 127.0.0.1 scram-sha-256");
}

TEST(SupportPgServer, ListensOnMoreAddressesAndAllowsMoreNetworks) {
  pg_server::options opts;
  opts.listen_addresses = {"127.0.0.2"};
  opts.allowed_networks = {"10.231.254.0/24"};
  opts.settings = {"max_connections=20"};
  pg_server pg{opts};
  EXPECT_EQ(pg.uri_for_host("127.0.0.2"),
            "postgresql://outbox@127.0.0.2:" + std::to_string(pg.port()) +
                "/outbox?passfile=" + pg.passfile());
  EXPECT_THAT(pg.uri_for_host("::1"), StartsWith("postgresql://outbox@[::1]:"));
  auto conn = connect(pg.uri_for_host("127.0.0.2"));
  ASSERT_EQ(PQstatus(conn.get()), CONNECTION_OK) << PQerrorMessage(conn.get());
  EXPECT_EQ(value_of(conn.get(), "SELECT host(inet_server_addr())"),
            "127.0.0.2");
  EXPECT_EQ(value_of(conn.get(), "SHOW listen_addresses"),
            "127.0.0.1,127.0.0.2");
  EXPECT_EQ(value_of(conn.get(), "SHOW max_connections"), "20");
  EXPECT_EQ(value_of(conn.get(),
                     "SELECT string_agg(address || '/' || coalesce(netmask,"
                     " '') || ' ' || auth_method, '; ' ORDER BY line_number)"
                     " FROM pg_hba_file_rules"),
            "127.0.0.1/255.255.255.255 scram-sha-256; "
            "127.0.0.2/255.255.255.255 scram-sha-256; "
            "10.231.254.0/255.255.255.0 scram-sha-256");
}

TEST(SupportPgServer, EachFixtureHasAClusterOfItsOwn) {
  pg_server first;
  pg_server second;
  EXPECT_NE(first.port(), second.port());
  EXPECT_NE(first.dir(), second.dir());
  auto one = connect(first.uri());
  auto other = connect(second.uri());
  ASSERT_EQ(PQstatus(one.get()), CONNECTION_OK) << PQerrorMessage(one.get());
  ASSERT_EQ(PQstatus(other.get()), CONNECTION_OK)
      << PQerrorMessage(other.get());
  ASSERT_EQ(value_of(one.get(), "CREATE TABLE only_here (v int)"), "");
  EXPECT_EQ(value_of(one.get(), "SELECT count(*) FROM only_here"), "0");
  EXPECT_THAT(value_of(other.get(), "SELECT count(*) FROM only_here"),
              HasSubstr("does not exist"));
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

TEST(SupportPgServer, AKilledServerLeavesNoSharedMemory) {
  pid_t first = -1;
  pid_t second = -1;
  std::string dir;
  {
    pg_server pg;
    dir = pg.dir();
    first = pg.pid();
    auto conn = connect(pg.uri());
    ASSERT_EQ(PQstatus(conn.get()), CONNECTION_OK);
    run_parallel_query(conn.get());
    // Its dynamic segments are files in its data folder, none in /dev/shm;
    // its System V segment is found by the cleanup's own lookup.
    EXPECT_NE(value_of(conn.get(), "SELECT count(*) FROM pg_ls_dir("
                                   "'pg_dynshmem')"),
              "0");
    EXPECT_EQ(shm_files_mapped_by(first), std::set<std::string>{});
    EXPECT_EQ(pg::segments_created_by(first).size(), 1u);

    // Killed as the parent's death or the stop's last resort would: it
    // cleans up nothing itself. crash() reaps it and removes its segment.
    ASSERT_EQ(::kill(first, SIGKILL), 0);
    pg.crash();
    EXPECT_TRUE(pg::segments_created_by(first).empty());
    pg.start();
    second = pg.pid();
    EXPECT_EQ(pg::segments_created_by(second).size(), 1u);
  }
  EXPECT_TRUE(pg::segments_created_by(second).empty());
  EXPECT_FALSE(std::filesystem::exists(dir)) << dir;
}

TEST(SupportPgServer, TheShmCheckSeesPosixSegments) {
  // The check above would see segments in /dev/shm: with PostgreSQL's
  // default kind, it does; crash() and the destructor remove them.
  pg_server::options opts;
  opts.settings = {"dynamic_shared_memory_type=posix"};
  std::set<std::string> mapped;
  {
    pg_server pg{opts};
    auto conn = connect(pg.uri());
    ASSERT_EQ(PQstatus(conn.get()), CONNECTION_OK);
    run_parallel_query(conn.get());
    mapped = shm_files_mapped_by(pg.pid());
    EXPECT_FALSE(mapped.empty());
    pg.crash();
    pg.start();
  }
  for (const auto& file : mapped)
    EXPECT_FALSE(std::filesystem::exists(file)) << file;
}

} // namespace
} // namespace outbox::test
