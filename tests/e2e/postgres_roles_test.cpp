#include "support/fast_config.hpp"
#include "support/pg_programs.hpp"
#include "support/pg_server.hpp"
#include "support/process.hpp"
#include "support/redis_server.hpp"
#include "support/temp_dir.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <fstream>
#include <string>
#include <vector>

// The roles of `outbox init --print-grants` on a real PostgreSQL 15: each
// part of the pipeline runs under its own role with nothing more (the
// writer places orders, the relays publish them, the consumers apply them,
// `outbox verify` as the owner passes), what a role may not do the server
// refuses, and a writer without its privileges ends a bounded run naming
// the refusal instead of retrying it forever.

namespace outbox::test {
namespace {

const std::vector<std::string> roles = {"outbox_writer", "outbox_relay",
                                        "outbox_consumer"};

pg_server::options with_roles() {
  pg_server::options o;
  o.roles = roles;
  return o;
}

class E2EPostgresRoles : public ::testing::Test {
protected:
  void SetUp() override {
    // Short backoffs: the stall rule waits for the longest (below).
    std::ofstream{config_} << fast_config(
        {{"lease", {{"backoff_base_ms", 10}, {"backoff_max_ms", 100}}}});
    ASSERT_EQ(as_owner({"init"}).exit_code, 0);
    auto grants = run_outbox({"init", "--print-grants"});
    ASSERT_EQ(grants.exit_code, 0) << grants.err;
    // Twice: a deployment runs it again after an upgrade.
    for (int i = 0; i < 2; ++i)
      ASSERT_EQ(psql(pg_.uri(), grants.out).exit_code, 0);
    std::string passwords;
    for (const auto& role : roles) {
      ASSERT_EQ(
          psql(pg_.uri(), "ALTER ROLE " + role + " PASSWORD 'pw-" + role + "'")
              .exit_code,
          0);
      passwords += "127.0.0.1:" + std::to_string(pg_.port()) +
                   ":outbox:" + role + ":pw-" + role + "\n";
    }
    std::ofstream{passfile_} << passwords;
    ::chmod(passfile_.c_str(), 0600);
  }

  /// The URI of the outbox database as `role`.
  std::string uri_of(const std::string& role) const {
    return "postgresql://" + role + "@127.0.0.1:" + std::to_string(pg_.port()) +
           "/outbox?passfile=" + pg::uri_escape(passfile_);
  }

  process_result outbox_as(const std::string& uri,
                           std::vector<std::string> args) const {
    args.insert(args.end(),
                {"--db", uri, "--redis", redis_.endpoint().to_string(),
                 "--config", config_});
    return run_outbox(args, dir_.path().string());
  }

  process_result as_owner(std::vector<std::string> args) const {
    return outbox_as(pg_.uri(), std::move(args));
  }

  /// psql at `uri`, stopping at the first error.
  process_result psql(const std::string& uri, const std::string& sql) const {
    auto r = run_process(
        {"/usr/bin/psql", uri, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-c", sql},
        dir_.path().string());
    EXPECT_TRUE(r.exit_code == 0 || sql.rfind("UPDATE", 0) == 0 ||
                sql.rfind("DELETE", 0) == 0 || sql.rfind("INSERT", 0) == 0)
        << sql << "\n"
        << r.err;
    return r;
  }

  temp_dir dir_{"outbox-pg-roles"};
  std::string config_ = dir_.file("outbox.json");
  std::string passfile_ = dir_.file("roles.pgpass");
  pg_server pg_{with_roles()};
  redis_server redis_;
};

TEST_F(E2EPostgresRoles, EachPartRunsUnderItsRoleWithNothingMore) {
  auto write = outbox_as(uri_of("outbox_writer"), {"write", "--orders", "40"});
  ASSERT_EQ(write.exit_code, 0) << write.out << write.err;
  auto relay = outbox_as(uri_of("outbox_relay"), {"relay", "--until-drained"});
  ASSERT_EQ(relay.exit_code, 0) << relay.out << relay.err;
  auto consume =
      outbox_as(uri_of("outbox_consumer"), {"consume", "--until-drained"});
  ASSERT_EQ(consume.exit_code, 0) << consume.out << consume.err;
  auto verify = as_owner({"verify"});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;

  // Nothing more: no role deletes rows, rewrites a published event or
  // changes the schema.
  for (const auto& [role, sql] :
       std::vector<std::pair<std::string, std::string>>{
           {"outbox_relay", "DELETE FROM outbox"},
           {"outbox_relay", "UPDATE outbox SET payload = '{}'"},
           {"outbox_relay", "SELECT outbox_give_back_seq('a')"},
           {"outbox_consumer",
            "SELECT * FROM outbox_event_of(gen_random_uuid())"},
           {"outbox_relay", "INSERT INTO outbox (aggregate_id, event_type, "
                            "payload) VALUES ('a', 'X', '{}')"},
           {"outbox_writer", "UPDATE outbox SET payload = '{}'"},
           {"outbox_writer", "DELETE FROM request_keys"},
           {"outbox_consumer", "UPDATE outbox SET status = 'PENDING'"},
           {"outbox_consumer", "DROP TABLE orders"}}) {
    auto r = run_process({"/usr/bin/psql", uri_of(role), "-X", "-q", "-v",
                          "ON_ERROR_STOP=1", "-c", sql},
                         dir_.path().string());
    EXPECT_NE(r.exit_code, 0) << role << ": " << sql;
    EXPECT_THAT(r.err, testing::AnyOf(testing::HasSubstr("permission denied"),
                                      testing::HasSubstr("must be owner")))
        << role << ": " << sql;
  }
}

TEST_F(E2EPostgresRoles, AWriterWithoutItsPrivilegesEndsABoundedRunNamingIt) {
  // The relays' role may not insert: every commit is refused.
  auto write = outbox_as(uri_of("outbox_relay"), {"write", "--orders", "5"});
  EXPECT_EQ(write.exit_code, 1) << write.out << write.err;
  EXPECT_THAT(write.err,
              testing::HasSubstr("stalled: the database refuses the writer's "
                                 "commits: "));
  EXPECT_THAT(write.err, testing::HasSubstr("permission denied"));
  EXPECT_THAT(write.err, testing::HasSubstr("0 of 5 orders placed"));
}

} // namespace
} // namespace outbox::test
