#include "support/build_paths.hpp"
#include "support/pg_server.hpp"
#include "support/process.hpp"
#include "support/redis_server.hpp"
#include "support/temp_dir.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

// deploy/ as a newcomer uses it: the systemd units pass `systemd-analyze
// verify` without a warning, and each role starts from its example config
// (deploy/config) against private servers, as the documented PostgreSQL
// role (`outbox init --print-grants`) and the documented Redis ACL user
// (deploy/redis/outbox-user.conf), its passwords handed over the way the
// units hand them (PGPASSFILE, OUTBOX_REDIS_PASSWORD_FILE).

namespace outbox::test {
namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& path) {
  std::ifstream in{path};
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

fs::path deploy_dir() {
  return fs::path{source_dir()} / "deploy";
}

TEST(DeployUnits, SystemdAnalyzeVerifiesEveryUnitWithoutAWarning) {
  const char* analyze = "/usr/bin/systemd-analyze";
  if (::access(analyze, X_OK) != 0)
    GTEST_SKIP() << "systemd-analyze is not installed (Debian: systemd); "
                    "scripts/test installs it";
  temp_dir dir{"outbox-units"};
  std::vector<std::string> argv{analyze, "verify"};
  int units = 0;
  for (const auto& entry : fs::directory_iterator{deploy_dir() / "systemd"}) {
    auto name = entry.path().filename().string();
    // A template is verified as an instance of it.
    auto at = name.find("@.");
    if (at != std::string::npos)
      name.insert(at + 1, "1");
    // Where the unit runs outbox, the binary under test: verify checks
    // that ExecStart= names an executable.
    auto text = std::regex_replace(read_file(entry.path()),
                                   std::regex{"/usr/local/bin/outbox"},
                                   outbox_binary());
    std::ofstream{dir.file(name)} << text;
    argv.push_back(dir.file(name));
    ++units;
  }
  EXPECT_EQ(units, 7);
  auto r = run_process(argv, dir.path().string());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // Unknown keys, unresolvable specifiers: warnings, exit 0 all the same.
  EXPECT_EQ(r.err, "") << "systemd-analyze verify warned";
}

/// The example configs' servers, private: PostgreSQL with the roles of
/// --print-grants, Redis with the documented ACL user.
class DeployE2E : public ::testing::Test {
protected:
  static pg_server::options with_roles() {
    pg_server::options o;
    o.roles = {"outbox_writer", "outbox_relay", "outbox_consumer"};
    return o;
  }

  static redis_server::options with_acl_user() {
    redis_server::options o;
    o.aof = true; // persistence on, as deploy/ wants: no warning
    auto user = read_file(deploy_dir() / "redis" / "outbox-user.conf");
    auto line = user.substr(user.find("\nuser ") + 1);
    o.config_lines = {
        std::regex_replace(line, std::regex{">CHANGE-ME"}, ">redis-pw-1")};
    while (!o.config_lines[0].empty() && o.config_lines[0].back() == '\n')
      o.config_lines[0].pop_back();
    return o;
  }

  void SetUp() override {
    auto init = run_outbox({"init", "--db", pg_.uri()}, dir_.path().string());
    ASSERT_EQ(init.exit_code, 0) << init.err;
    auto grants = run_outbox({"init", "--print-grants"});
    ASSERT_EQ(grants.exit_code, 0) << grants.err;
    std::string sql = grants.out;
    std::string passwords;
    for (const auto* role :
         {"outbox_writer", "outbox_relay", "outbox_consumer"}) {
      sql +=
          std::string{"ALTER ROLE "} + role + " PASSWORD 'pw-" + role + "';\n";
      passwords += "127.0.0.1:" + std::to_string(pg_.port()) +
                   ":outbox:" + role + ":pw-" + role + "\n";
    }
    auto psql = run_process({"/usr/bin/psql", pg_.uri(), "-X", "-q", "-v",
                             "ON_ERROR_STOP=1", "-c", sql},
                            dir_.path().string());
    ASSERT_EQ(psql.exit_code, 0) << psql.err;
    write_secret(pgpass_, passwords);
    write_secret(redis_password_, "redis-pw-1\n");
    ::setenv("PGPASSFILE", pgpass_.c_str(), 1);
    ::setenv("OUTBOX_REDIS_PASSWORD_FILE", redis_password_.c_str(), 1);
  }

  void TearDown() override {
    ::unsetenv("PGPASSFILE");
    ::unsetenv("OUTBOX_REDIS_PASSWORD_FILE");
  }

  static void write_secret(const std::string& path, const std::string& text) {
    std::ofstream{path} << text;
    ::chmod(path.c_str(), 0600);
  }

  /// `outbox ROLE FLAGS` with the example config deploy/config/CONFIG.json;
  /// only the servers' addresses replaced (the flags win over the file).
  process_result role(const std::string& command, const std::string& config,
                      const std::string& db_user,
                      std::vector<std::string> flags) const {
    std::vector<std::string> args{command};
    args.insert(args.end(), flags.begin(), flags.end());
    args.insert(args.end(),
                {"--config", (deploy_dir() / "config" / (config + ".json")),
                 "--db",
                 "postgresql://" + db_user +
                     "@127.0.0.1:" + std::to_string(pg_.port()) + "/outbox",
                 "--redis", redis_.endpoint().to_string()});
    return run_outbox(args, dir_.path().string(), 120'000);
  }

  temp_dir dir_{"outbox-deploy"};
  std::string pgpass_ = dir_.file("roles.pgpass");
  std::string redis_password_ = dir_.file("redis-password");
  pg_server pg_{with_roles()};
  redis_server redis_{with_acl_user()};
};

TEST_F(DeployE2E, EachRoleRunsFromItsExampleConfigAsItsOwnUsers) {
  auto write = role("write", "write", "outbox_writer",
                    {"--orders", "60", "--rate", "0"});
  ASSERT_EQ(write.exit_code, 0) << write.out << write.err;
  EXPECT_THAT(write.out, testing::HasSubstr("60 orders placed"));
  auto relay = role("relay", "relay", "outbox_relay", {"--until-drained"});
  ASSERT_EQ(relay.exit_code, 0) << relay.out << relay.err;
  auto consume =
      role("consume", "consume", "outbox_consumer", {"--until-drained"});
  ASSERT_EQ(consume.exit_code, 0) << consume.out << consume.err;
  // Every line of their logs is JSON (log.format), none a warning.
  for (const auto* err : {&write.err, &relay.err, &consume.err}) {
    std::istringstream lines{*err};
    for (std::string line; std::getline(lines, line);) {
      EXPECT_EQ(line.rfind("{\"ts\":", 0), 0u) << line;
      EXPECT_THAT(line, testing::Not(testing::HasSubstr("\"level\":\"warn")))
          << line;
    }
  }
  // The retention and verify units' commands, as the owner with admin.json.
  for (std::vector<std::string> admin :
       {std::vector<std::string>{"purge", "--published-older-than", "7d"},
        {"trim", "--processed-older-than", "7d"},
        {"verify"}}) {
    admin.insert(admin.end(),
                 {"--config", (deploy_dir() / "config" / "admin.json"), "--db",
                  pg_.uri(), "--redis", redis_.endpoint().to_string()});
    auto r = run_outbox(admin, dir_.path().string());
    EXPECT_EQ(r.exit_code, 0) << admin[0] << "\n" << r.out << r.err;
  }
}

} // namespace
} // namespace outbox::test
