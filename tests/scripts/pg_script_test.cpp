// scripts/pg as a user runs it, isolated like the other scripts' tests
// (script_fixture: var/ in a temporary folder) on a port of its own
// (OUTBOX_PG_PORT). The server it starts daemonizes, so it is not our
// child: the fixture stops it by the pid of its pidfile, whatever the test
// did.

#include "support/file_checks.hpp"
#include "support/pg_server.hpp"
#include "tests/scripts/script_fixture.hpp"

#include <gmock/gmock.h>

#include <libpq-fe.h>

#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>

#include <memory>

namespace outbox::test {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

class PgScript : public script_fixture {
protected:
  PgScript() { let_postgres_through(); }

  process_result pg(const std::vector<std::string>& args,
                    const std::vector<std::string>& env = {}) {
    std::vector<std::string> all = {"OUTBOX_PG_PORT=" +
                                    std::to_string(pg_port_)};
    all.insert(all.end(), env.begin(), env.end());
    return script("pg", args, all);
  }

  std::filesystem::path pg_dir() const { return var_ / "pg"; }

  std::string uri() const {
    return "postgresql://outbox@127.0.0.1:" + std::to_string(pg_port_) +
           "/outbox?passfile=" + (pg_dir() / "pgpass").string();
  }

  int pg_port_ = free_loopback_port();
};

gid_t group_of(const std::filesystem::path& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 ? info.st_gid : gid_t(-1);
}

std::string query(const std::string& uri, const std::string& sql) {
  std::unique_ptr<PGconn, decltype(&PQfinish)> conn{PQconnectdb(uri.c_str()),
                                                    &PQfinish};
  if (PQstatus(conn.get()) != CONNECTION_OK)
    return std::string("error: ") + PQerrorMessage(conn.get());
  std::unique_ptr<PGresult, decltype(&PQclear)> result{
      PQexec(conn.get(), sql.c_str()), &PQclear};
  if (PQresultStatus(result.get()) != PGRES_TUPLES_OK)
    return std::string("error: ") + PQerrorMessage(conn.get());
  return PQgetvalue(result.get(), 0, 0);
}

TEST_F(PgScript, StartStatusSecondStartStop) {
  scoped_umask usual{022};
  auto status = pg({"status"});
  EXPECT_EQ(status.exit_code, 1) << status.out << status.err;
  EXPECT_EQ(status.out, "stopped\n");

  auto start = pg({"start"});
  ASSERT_EQ(start.exit_code, 0) << start.err;
  EXPECT_EQ(start.out, uri() + "\n");
  auto pid = recorded_pg_pid();
  ASSERT_TRUE(running(pid)) << start.err;
  EXPECT_THAT(start.err, HasSubstr("started (pid " + std::to_string(pid) +
                                   ", port " + std::to_string(pg_port_)));
  EXPECT_EQ(query(uri(), "SELECT current_user || ' ' || current_database()"),
            "outbox outbox");
  EXPECT_EQ(query(uri(), "SHOW listen_addresses"), "127.0.0.1");
  EXPECT_EQ(query(uri(), "SHOW unix_socket_directories"), "");
  // The password, in the file the URI names, is the only way in.
  EXPECT_THAT(text_of(pg_dir() / "pgpass"),
              ::testing::MatchesRegex("\\*:\\*:\\*:outbox:[0-9a-f]{32}\n"));
  EXPECT_EQ(mode_of(pg_dir() / "pgpass"), 0600);
  EXPECT_THAT(query(uri() + "&password=wrong", "SELECT 1"),
              HasSubstr("password authentication failed"));
  EXPECT_EQ(query(uri(), "SELECT string_agg(type || ' ' || address || ' ' ||"
                         " auth_method, '; ') FROM pg_hba_file_rules"),
            "host 127.0.0.1 scram-sha-256");
  EXPECT_THAT(start.err, ::testing::Not(HasSubstr(
                             text_of(pg_dir() / "pgpass").substr(13, 32))));

  status = pg({"status"});
  EXPECT_EQ(status.exit_code, 0) << status.err;
  EXPECT_EQ(status.out, "running (pid " + std::to_string(pid) + ", port " +
                            std::to_string(pg_port_) + ") " + uri() + "\n");

  // Its files are its user's only. As root the server runs as postgres:
  // var/ and var/pg let it through to its data without letting it list
  // them, and it reads pg_hba.conf; everything else there is root's.
  struct stat data_stat {};
  ASSERT_EQ(::stat((pg_dir() / "data").c_str(), &data_stat), 0);
  auto open = not_private_under(pg_dir());
  if (::geteuid() == 0) {
    auto postgres_group = ::getgrnam("postgres")->gr_gid;
    EXPECT_EQ(mode_of(var_), 0710);
    EXPECT_EQ(group_of(var_), postgres_group);
    EXPECT_EQ(mode_of(pg_dir()), 0710);
    EXPECT_EQ(group_of(pg_dir()), postgres_group);
    EXPECT_EQ(data_stat.st_uid, ::getpwnam("postgres")->pw_uid);
    EXPECT_EQ(group_of(pg_dir() / "pg_hba.conf"), postgres_group);
    EXPECT_EQ(open, std::vector<std::string>{
                        (pg_dir() / "pg_hba.conf").string() + " 0640"});
  } else {
    EXPECT_EQ(mode_of(var_), 0700);
    EXPECT_EQ(mode_of(pg_dir()), 0700);
    EXPECT_EQ(data_stat.st_uid, ::geteuid());
    EXPECT_TRUE(open.empty()) << ::testing::PrintToString(open);
  }
  EXPECT_EQ(mode_of(pg_dir() / "data"), 0700);
  for (auto root_file : {"pgpass", "pg.log", "initdb.log"}) {
    struct stat file {};
    ASSERT_EQ(::stat((pg_dir() / root_file).c_str(), &file), 0) << root_file;
    EXPECT_EQ(file.st_uid, ::geteuid()) << root_file;
  }

  auto again = pg({"start"});
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out, uri() + "\n");
  EXPECT_THAT(again.err,
              HasSubstr("already running (pid " + std::to_string(pid)));
  EXPECT_EQ(recorded_pg_pid(), pid);

  auto stop = pg({"stop"});
  EXPECT_EQ(stop.exit_code, 0) << stop.err;
  EXPECT_THAT(stop.err, HasSubstr("stopped (pid " + std::to_string(pid)));
  EXPECT_TRUE(ends_within(pid, 5'000));
  status = pg({"status"});
  EXPECT_EQ(status.exit_code, 1) << status.out << status.err;
  EXPECT_THAT(status.out, StartsWith("stopped"));
  EXPECT_THAT(query(uri(), "SELECT 1"), StartsWith("error: "));
}

TEST_F(PgScript, StartRefusesAPostgreSQLItDidNotStart) {
  pg_server foreign;
  foreign_pid_ = foreign.pid();
  auto port = std::to_string(foreign.port());
  auto start = pg({"start"}, {"OUTBOX_PG_PORT=" + port});
  EXPECT_EQ(start.exit_code, 1) << start.err;
  EXPECT_THAT(start.err, HasSubstr("another PostgreSQL already answers on "
                                   "127.0.0.1:" +
                                   port));
  EXPECT_EQ(start.out, "");
  EXPECT_EQ(recorded_pg_pid(), -1);
  EXPECT_TRUE(running(foreign.pid()));
  EXPECT_EQ(query(foreign.uri(), "SELECT 1"), "1");
}

TEST_F(PgScript, AForgedPidfileIsNeitherTrustedNorSignalled) {
  // A cluster of its own first, stopped; then its pidfile names the
  // foreign server and its port, as if that were the private one.
  auto start = pg({"start"});
  ASSERT_EQ(start.exit_code, 0) << start.err;
  ASSERT_EQ(pg({"stop"}).exit_code, 0);
  pg_server foreign;
  foreign_pid_ = foreign.pid();
  auto foreign_text = "pid " + std::to_string(foreign.pid());
  std::ofstream{pg_pidfile()} << foreign.pid() << "\n"
                              << foreign.dir() << "/data\n0\n"
                              << foreign.port() << "\n";

  // It does not know our password: it cannot be asked who it is.
  auto status = pg({"status"});
  EXPECT_EQ(status.exit_code, 1) << status.out << status.err;
  EXPECT_THAT(status.out, StartsWith("stopped (" + foreign_text + " of "));
  EXPECT_THAT(status.out, HasSubstr(" is not the server on port " +
                                    std::to_string(foreign.port()) +
                                    ": the PostgreSQL there does not let "
                                    "outbox ask it who it is"));
  // Even with its password, it works on other data.
  auto ours = text_of(pg_dir() / "pgpass");
  std::ofstream{pg_dir() / "pgpass"} << text_of(foreign.passfile());
  status = pg({"status"});
  EXPECT_EQ(status.exit_code, 1) << status.out << status.err;
  EXPECT_THAT(status.out,
              HasSubstr(", the server on port " +
                        std::to_string(foreign.port()) + ", works on " +
                        foreign.dir() + "/data, not on "));

  auto stop = pg({"stop"});
  EXPECT_EQ(stop.exit_code, 0) << stop.err;
  EXPECT_THAT(stop.err, HasSubstr("left alone"));
  // A signalled server would be gone or going: it still serves.
  EXPECT_TRUE(running(foreign.pid())) << "the foreign server was stopped";
  EXPECT_EQ(query(foreign.uri(), "SELECT 1"), "1");

  std::ofstream{pg_dir() / "pgpass"} << ours;
  auto again = pg({"start"});
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_THAT(again.err, HasSubstr("ignoring the old pidfile"));
  EXPECT_EQ(again.out, uri() + "\n");
  auto ours_pid = recorded_pg_pid();
  EXPECT_NE(ours_pid, foreign.pid());
  EXPECT_TRUE(running(ours_pid));
  EXPECT_TRUE(running(foreign.pid()));
  EXPECT_EQ(query(foreign.uri(), "SELECT 1"), "1");
  EXPECT_EQ(query(uri(), "SELECT 1"), "1");
}

TEST_F(PgScript, OtherScriptsKeepVarPassableForPostgres) {
  if (::geteuid() != 0)
    GTEST_SKIP() << "as another user than root, var/ stays 0700";
  auto start = pg({"start"});
  ASSERT_EQ(start.exit_code, 0) << start.err;
  ASSERT_EQ(mode_of(var_), 0710);
  // scripts/redis (like scripts/run and scripts/test) makes var/ private
  // again: not so private that postgres can no longer reach var/pg.
  auto redis = script("redis", {"start"});
  ASSERT_EQ(redis.exit_code, 0) << redis.err;
  EXPECT_EQ(mode_of(var_), 0710);
  EXPECT_EQ(mode_of(redis_dir()), 0700);
  ASSERT_EQ(pg({"stop"}).exit_code, 0);
  auto again = pg({"start"});
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(query(uri(), "SELECT 1"), "1");
}

TEST_F(PgScript, AsAnotherUserTheServerRunsAsThatUser) {
  if (::geteuid() != 0)
    GTEST_SKIP() << "needs root to run the script as another user";
  constexpr uid_t nobody = 65534;
  // A folder of that user's own, as a fresh clone in their home would be.
  ASSERT_EQ(::chown(tmp_.path().c_str(), nobody, nobody), 0);
  launcher_ = {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534",
               "--clear-groups", "--"};
  auto start = pg({"start"}, {"HOME=" + tmp_.path().string()});
  ASSERT_EQ(start.exit_code, 0) << start.out << start.err;
  EXPECT_EQ(start.out, uri() + "\n");
  auto pid = recorded_pg_pid();
  ASSERT_TRUE(running(pid));
  EXPECT_THAT(text_of("/proc/" + std::to_string(pid) + "/status"),
              HasSubstr("\nUid:\t65534\t"));
  struct stat var_stat {};
  ASSERT_EQ(::stat(var_.c_str(), &var_stat), 0);
  EXPECT_EQ(var_stat.st_uid, nobody);
  EXPECT_EQ(mode_of(var_), 0700);
  EXPECT_EQ(query(uri(), "SELECT 1"), "1");
  auto stop = pg({"stop"}, {"HOME=" + tmp_.path().string()});
  EXPECT_EQ(stop.exit_code, 0) << stop.err;
  EXPECT_TRUE(ends_within(pid, 5'000));
}

TEST_F(PgScript, TheReadmeFlowsRunInOrder) {
  // README, Quick start, then docs/postgres.md, "Several hosts with
  // PostgreSQL", as printed but for fewer orders: one private Redis serves
  // both databases, each in a keyspace of its own.
  auto quick =
      script("run", {"run", "--relays", "3", "--consumers", "2", "--orders",
                     "300", "--until-drained", "--crash-relay-after-publish",
                     "0.05", "--crash-consumer-after-effect", "0.01"});
  ASSERT_EQ(quick.exit_code, 0) << quick.out << quick.err;
  auto start = pg({"start"});
  ASSERT_EQ(start.exit_code, 0) << start.err;
  auto u = start.out.substr(0, start.out.find('\n'));
  auto with_pg = [this](std::vector<std::string> args) {
    return script("run", args, {"OUTBOX_PG_PORT=" + std::to_string(pg_port_)});
  };
  auto init = with_pg({"init", "--db", u});
  ASSERT_EQ(init.exit_code, 0) << init.err;
  auto run =
      with_pg({"run", "--db", u, "--key-prefix", "pg:", "--relays", "3",
               "--consumers", "2", "--orders", "300", "--until-drained"});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  auto verify = with_pg({"verify", "--db", u, "--key-prefix", "pg:"});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
  // The Quick start's database still verifies in its own keyspace.
  auto sqlite = script("run", {"verify"});
  EXPECT_EQ(sqlite.exit_code, 0) << sqlite.out << sqlite.err;
}

} // namespace
} // namespace outbox::test
