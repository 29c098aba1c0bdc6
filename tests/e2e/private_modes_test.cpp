// On a shared host, what outbox creates is its user's only: the database
// and its -wal and -shm files 0600, the lab's folder 0700 and its outputs
// 0600, whatever the umask of the shell that started it (the children here
// inherit the usual 022).

#include "support/file_checks.hpp"
#include "support/process.hpp"
#include "support/redis_server.hpp"
#include "support/temp_dir.hpp"
#include "tests/lab/lab_fixture.hpp"

#include <SQLiteCpp/Database.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <thread>

namespace outbox::test {
namespace {

namespace fs = std::filesystem;

TEST(E2EPrivateModes, InitAndRunKeepTheDatabaseAndItsWalToTheOwner) {
  scoped_umask usual{022};
  temp_dir dir{"outbox-modes"};
  redis_server redis;
  auto db = dir.file("app.db");
  auto init = run_outbox({"init", "--db", db}, dir.path().string());
  ASSERT_EQ(init.exit_code, 0) << init.err;
  EXPECT_EQ(mode_of(db), 0600);

  // While a run has the database open, its -wal and -shm files exist.
  child_process run{
      outbox_argv({"run", "--orders", "0", "--relays", "1", "--consumers", "1",
                   "--db", db, "--redis", redis.endpoint().to_string()}),
      dir.path().string()};
  ASSERT_TRUE(run.wait_for_stderr("outbox run: running", 30'000));
  // The actors open their connections after that line; the files appear
  // with the first one (no event tells: poll, bounded).
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while ((!fs::exists(db + "-wal") || !fs::exists(db + "-shm")) &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(mode_of(db + "-wal"), 0600);
  EXPECT_EQ(mode_of(db + "-shm"), 0600);
  EXPECT_EQ(mode_of(db), 0600);
  run.signal(SIGTERM);
  auto r = run.wait(30'000);
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST(E2EPrivateModes, InitTightensADatabaseOthersCouldRead) {
  scoped_umask usual{022};
  temp_dir dir{"outbox-modes"};
  auto db = dir.file("old.db");
  // As an older outbox left it: created by SQLite under umask 022.
  SQLite::Database{db, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE}.exec(
      "PRAGMA user_version = 0");
  ASSERT_EQ(mode_of(db), 0644);

  auto status = run_outbox({"status", "--db", db, "--redis", "127.0.0.1:1"},
                           dir.path().string());
  EXPECT_EQ(mode_of(db), 0644) << "only init changes modes";
  auto init = run_outbox({"init", "--db", db}, dir.path().string());
  ASSERT_EQ(init.exit_code, 0) << init.err;
  EXPECT_EQ(mode_of(db), 0600);
  EXPECT_NE(init.err.find(db + " was open to other users (mode 0644): now "
                               "0600"),
            std::string::npos)
      << init.err;
  auto again = run_outbox({"init", "--db", db}, dir.path().string());
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_THAT(again.err,
              testing::Not(testing::HasSubstr("open to other users")));
}

using E2EPrivateLabModes = lab_fixture;

TEST_F(E2EPrivateLabModes, LabFolderAndEveryOutputAreTheOwnersOnly) {
  scoped_umask usual{022};
  auto r = lab_all(dir_);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(mode_of(dir_), 0700);
  for (auto name : {"app.db", "dualwrite.db", "dualwrite.out",
                    "order_check.out", "atleastonce.out", "report.txt"})
    EXPECT_EQ(mode_of(fs::path{dir_} / name), 0600) << name;
  auto open = not_private_under(dir_);
  EXPECT_TRUE(open.empty()) << ::testing::PrintToString(open);
}

} // namespace
} // namespace outbox::test
