// `outbox lab` given bad input: a clear message, a non-zero exit, nothing
// created or changed.

#include "tests/lab/lab_fixture.hpp"

#include <gmock/gmock.h>
#include <unistd.h>

#include <fstream>

namespace outbox::test {
namespace {

using LabBadInput = lab_fixture;

TEST_F(LabBadInput, UnknownStepExits2AndListsTheSteps) {
  auto r = lab_step("rellay");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, testing::HasSubstr("unknown step 'rellay'"));
  for (auto step : {"init", "dualwrite", "place_order", "relay", "order_check",
                    "relay_crash", "consumer", "report"})
    EXPECT_THAT(r.err, testing::HasSubstr(step)) << step;
  EXPECT_FALSE(std::filesystem::exists(dir_));
}

TEST_F(LabBadInput, DbFlagAndMissingDirAreUsageErrors) {
  auto redis = redis_.endpoint().to_string();
  auto with_db = run_outbox(
      {"lab", "--dir", dir_, "--db", tmp_.file("x.db"), "--redis", redis},
      tmp_.path().string());
  EXPECT_EQ(with_db.exit_code, 2) << with_db.err;
  EXPECT_FALSE(std::filesystem::exists(tmp_.file("x.db")));
  EXPECT_THAT(with_db.err,
              testing::HasSubstr("--db is refused: the lab runs on its own "
                                 "SQLite file, " +
                                 dir_ + "/app.db"));
  auto with_uri = run_outbox({"lab", "--dir", dir_, "--db",
                              "postgresql://app:secret@db.example/orders",
                              "--redis", redis},
                             tmp_.path().string());
  EXPECT_EQ(with_uri.exit_code, 2) << with_uri.err;
  EXPECT_THAT(with_uri.err, testing::HasSubstr("PostgreSQL"));
  EXPECT_THAT(with_uri.err, testing::Not(testing::HasSubstr("secret")));
  EXPECT_FALSE(std::filesystem::exists(dir_));
  auto with_prefix = run_outbox(
      {"lab", "--dir", dir_, "--key-prefix", "mine:", "--redis", redis},
      tmp_.path().string());
  EXPECT_EQ(with_prefix.exit_code, 2) << with_prefix.err;
  EXPECT_THAT(with_prefix.err, testing::HasSubstr("--key-prefix is refused"));
  EXPECT_FALSE(std::filesystem::exists(dir_));
  auto no_dir = run_outbox({"lab", "--redis", redis}, tmp_.path().string());
  EXPECT_EQ(no_dir.exit_code, 2) << no_dir.err;
  EXPECT_THAT(no_dir.err, testing::HasSubstr("--dir"));
}

TEST_F(LabBadInput, APostgresDatabaseInTheConfigIsNamedNotUsed) {
  // A config shared with a pipeline on PostgreSQL: the lab says which
  // database it uses instead, and never touches the other.
  auto config = tmp_.file("pipeline.json");
  std::ofstream{config}
      << R"({"db": {"path": "postgresql://app:secret@127.0.0.1:1/orders"}})";
  auto r = run_outbox({"lab", "--dir", dir_, "--step", "init", "--config",
                       config, "--redis", redis_.endpoint().to_string()},
                      tmp_.path().string());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, testing::HasSubstr("the lab runs on its own SQLite "
                                        "file, " +
                                        dir_ + "/app.db"));
  EXPECT_THAT(r.err, testing::Not(testing::HasSubstr("secret")));
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/app.db"));
}

TEST_F(LabBadInput, UnwritableDirExits1) {
  auto file = tmp_.file("a-file");
  std::ofstream{file} << "not a folder";
  auto redis = redis_.endpoint().to_string();
  auto not_a_folder = lab_all(file);
  EXPECT_EQ(not_a_folder.exit_code, 1) << not_a_folder.err;
  EXPECT_THAT(not_a_folder.err, testing::HasSubstr("is not a folder"));
  auto under_a_file = lab_all(file + "/lab");
  EXPECT_EQ(under_a_file.exit_code, 1) << under_a_file.err;
  EXPECT_NE(under_a_file.err.find("cannot create --dir " + file + "/lab"),
            std::string::npos)
      << under_a_file.err;
  if (::geteuid() != 0) { // root writes through permission bits
    auto locked = tmp_.file("locked");
    std::filesystem::create_directory(locked);
    std::filesystem::permissions(locked,
                                 std::filesystem::perms::owner_read |
                                     std::filesystem::perms::owner_exec);
    auto r = lab_all(locked);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_THAT(r.err, testing::HasSubstr("cannot write in --dir"));
    std::filesystem::permissions(locked, std::filesystem::perms::owner_all);
  }
  // Still a plain file, untouched.
  std::ifstream in{file};
  std::string text;
  std::getline(in, text);
  EXPECT_EQ(text, "not a folder");
}

TEST_F(LabBadInput, StepBeforeInitSaysToRunInit) {
  for (auto step : {"relay", "place_order", "report"}) {
    auto r = lab_step(step);
    EXPECT_EQ(r.exit_code, 1) << step << ": " << r.err;
    EXPECT_NE(r.err.find("run `outbox lab --dir " + dir_ +
                         " --step init` "
                         "first"),
              std::string::npos)
        << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(dir_));
  // An existing but empty folder: still no app.db created.
  std::filesystem::create_directory(dir_);
  auto r = lab_step("relay");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("no lab database at " + dir_ + "/app.db"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(exists("app.db"));
}

TEST_F(LabBadInput, UnreachableRedisExits1AndChangesNothing) {
  step_ok("init");
  step_ok("place_order");
  auto endpoint = redis_.endpoint().to_string();
  redis_.stop();
  // The full lab would reset everything: it must not even start.
  auto all = lab_all(dir_);
  EXPECT_EQ(all.exit_code, 1) << all.err;
  EXPECT_NE(all.err.find("cannot reach Redis at " + endpoint),
            std::string::npos)
      << all.err;
  auto relay = lab_step("relay");
  EXPECT_EQ(relay.exit_code, 1) << relay.err;
  EXPECT_THAT(relay.err, testing::HasSubstr(endpoint));
  EXPECT_EQ(app_db_number("SELECT COUNT(*) FROM orders"), 1);
  EXPECT_EQ(app_db_number("SELECT COUNT(*) FROM outbox WHERE status = "
                          "'PENDING'"),
            1);
}

} // namespace
} // namespace outbox::test
