#include "tests/cli/audit_fixture.hpp"

#include <SQLiteCpp/Database.h>
#include <gmock/gmock.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

// The commands that only read the database (status, verify, failed) on a
// database the user may read but not write; the ones that write refuse it.

namespace outbox::test {
namespace {

constexpr uid_t nobody = 65534;

/// Runs as root: the database belongs to root, readable by all, in a folder
/// only root may write; the binary then runs as uid 65534 (setpriv).
class CliReadOnly : public CliAudit {
protected:
  void SetUp() override {
    if (::geteuid() != 0)
      GTEST_SKIP() << "needs root to run the binary as another user";
    if (!std::filesystem::exists("/usr/bin/setpriv"))
      GTEST_SKIP() << "needs setpriv";
    place("apple", 2);
    place("pear", 1);
    fail_next_row_of_two();
    // mkdtemp made the folder 0700; outbox made the file 0600.
    ASSERT_EQ(::chmod(dir_.path().c_str(), 0755), 0);
    ASSERT_EQ(::chmod(db_path().c_str(), 0644), 0);
  }

  /// The first row FAILED, the second left PENDING.
  void fail_next_row_of_two() {
    auto db = storage::sqlite::open_and_migrate({db_path(), 1000, "NORMAL"});
    test::outbox_tables store{*db};
    storage::lease_policy policy;
    policy.max_attempts = 1;
    policy.batch = 1;
    auto now = storage::wall_clock_now();
    auto claimed = store.claim_batch("r", now, policy);
    ASSERT_EQ(claimed.events.size(), 1u);
    store.fail("r", claimed.leases(), "broker refused", now, policy);
  }

  /// outbox `args` --db ... --redis ... as uid and gid 65534.
  process_result as_nobody(std::vector<std::string> args) {
    args.insert(args.end(),
                {"--db", db_path(), "--redis", redis_.endpoint().to_string()});
    auto argv = outbox_argv(args);
    std::vector<std::string> prefix{
        "/usr/bin/setpriv", "--reuid", "65534",
        "--regid",          "65534",   "--clear-groups"};
    argv.insert(argv.begin(), prefix.begin(), prefix.end());
    return run_process(argv, dir_.path().string());
  }

  void expect_reading_works(const std::string& when) {
    auto status = as_nobody({"status", "--json"});
    ASSERT_EQ(status.exit_code, 0) << when << ": " << status.err;
    auto out = json_of(status);
    EXPECT_EQ(out.at("outbox").at("orders"), orders_) << when;
    EXPECT_EQ(out.at("outbox").at("by_status").at("FAILED"), 1) << when;

    auto failed = as_nobody({"failed", "--json"});
    ASSERT_EQ(failed.exit_code, 0) << when << ": " << failed.err;
    EXPECT_EQ(json_of(failed).at("count"), 1) << when;

    auto verify = as_nobody({"verify", "--json"});
    EXPECT_EQ(verify.exit_code, 0) << when << ": " << verify.out << verify.err;
    EXPECT_TRUE(json_of(verify).at("ok").get<bool>()) << when;
  }

  void expect_writing_refused(const std::string& when) {
    std::vector<std::vector<std::string>> writers{
        {"retry", "--all-failed"}, {"purge", "--published-older-than", "1s"}};
    for (const auto& command : writers) {
      auto r = as_nobody(command);
      EXPECT_EQ(r.exit_code, 1) << when << ", " << command[0] << ": " << r.err;
      EXPECT_THAT(r.err, testing::HasSubstr("outbox: "));
      EXPECT_THAT(r.err, testing::HasSubstr("this user may only read it"))
          << when << ", " << command[0] << ": " << r.err;
    }
    SQLite::Database db{db_path()};
    EXPECT_EQ(db.execAndGet("SELECT COUNT(*) FROM outbox WHERE status = "
                            "'FAILED'")
                  .getInt(),
              1)
        << "a refused retry changed nothing";
  }

  std::int64_t orders_ = 2;
};

TEST_F(CliReadOnly, ReadsADatabaseNobodyHasOpen) {
  // Closed cleanly: no -wal or -shm file, and the user cannot create one.
  ASSERT_FALSE(std::filesystem::exists(db_path() + "-wal"));
  expect_reading_works("closed database");
  EXPECT_FALSE(std::filesystem::exists(db_path() + "-shm"))
      << "a reader cannot have made files in root's folder";
  expect_writing_refused("closed database");
}

TEST_F(CliReadOnly, ReadsCommitsStillInTheWriteAheadLog) {
  // A connection held open keeps the -wal and -shm files (0644, like the
  // database), and the order placed meanwhile stays in the log: a reader
  // that skipped it would count one order less.
  SQLite::Database held{db_path(), SQLite::OPEN_READWRITE};
  held.exec("PRAGMA wal_autocheckpoint = 0");
  held.execAndGet("SELECT COUNT(*) FROM orders");
  place("plum", 3);
  orders_ = 3;
  ASSERT_TRUE(std::filesystem::exists(db_path() + "-wal"));
  ASSERT_TRUE(std::filesystem::exists(db_path() + "-shm"));
  ::chmod((db_path() + "-wal").c_str(), 0644);
  ::chmod((db_path() + "-shm").c_str(), 0644);
  expect_reading_works("open database");
  expect_writing_refused("open database");
}

TEST_F(CliReadOnly, ReadsAWriteProtectedFileOfItsOwn) {
  // The user's own folder and file, the file chmod 0444.
  ASSERT_EQ(::chown(dir_.path().c_str(), nobody, nobody), 0);
  ASSERT_EQ(::chown(db_path().c_str(), nobody, nobody), 0);
  ASSERT_EQ(::chmod(db_path().c_str(), 0444), 0);
  expect_reading_works("0444 file");
  expect_writing_refused("0444 file");
}

} // namespace
} // namespace outbox::test
