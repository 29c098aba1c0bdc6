// Scenario 7 of the fault suite: database trouble. The file locked by
// another process past db.busy_timeout_ms, and paths that cannot hold a
// database (missing folder, a file where a folder should be, a folder where
// the file should be, a WAL file that cannot be opened). Each gets a clear
// error naming the path and the documented exit code, nothing is
// half-written, and the pipeline recovers once the trouble ends.

#include "tests/faults/fault_world.hpp"

#include <SQLiteCpp/Database.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace outbox::test {
namespace {

using json = nlohmann::json;
using steady = std::chrono::steady_clock;
namespace fs = std::filesystem;

/// Another process's connection holding the write lock (BEGIN IMMEDIATE)
/// until release() or destruction.
class write_lock {
public:
  explicit write_lock(const std::string& path)
      : db_(path, SQLite::OPEN_READWRITE) {
    db_.exec("BEGIN IMMEDIATE");
  }
  ~write_lock() { release(); }

  void release() {
    if (held_)
      db_.exec("ROLLBACK");
    held_ = false;
  }

private:
  SQLite::Database db_;
  bool held_ = true;
};

/// Rows of one table, read from outside.
std::int64_t count_rows(const std::string& db_path, const std::string& table) {
  SQLite::Database db{db_path, SQLite::OPEN_READONLY};
  return db.execAndGet("SELECT COUNT(*) FROM " + table).getInt64();
}

class FaultDatabase : public fault_world {
protected:
  void SetUp() override {
    // A short busy timeout so "locked past it" comes quickly; the lease
    // outlasts it and the Redis timeout together, as validation requires.
    write_config({{"db", {{"busy_timeout_ms", 250}}},
                  {"redis", {{"io_timeout_ms", 300}}},
                  {"lease", {{"ttl_ms", 700}}}});
  }

  std::vector<std::string> args(std::vector<std::string> command,
                                const std::string& db) const {
    return with_common(std::move(command), db, config_path_);
  }

  process_result outbox(std::vector<std::string> command,
                        const std::string& db) const {
    return run_outbox(args(std::move(command), db), dir_.path().string());
  }
};

TEST_F(FaultDatabase, PlaceOrderLockedPastBusyTimeoutFailsCleanly) {
  ASSERT_EQ(outbox({"init"}, db_path_).exit_code, 0);
  {
    write_lock lock{db_path_};
    auto started = steady::now();
    auto r = outbox({"place-order", "--sku", "apple", "--qty", "2",
                     "--request-id", "r-locked"},
                    db_path_);
    auto took = steady::now() - started;
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_THAT(r.err, testing::HasSubstr("busy"));
    EXPECT_THAT(r.err, testing::HasSubstr(db_path_));
    EXPECT_THAT(r.err, testing::HasSubstr("locked"));
    // It waited for the lock (busy_timeout) before giving up.
    EXPECT_GE(took, std::chrono::milliseconds(250));

    // Readers are not blocked by a writer in WAL mode: status answers.
    auto status = outbox({"status", "--json"}, db_path_);
    EXPECT_EQ(status.exit_code, 0) << status.err;
    // Other writers fail the same way, naming the file.
    auto retry = outbox({"retry", "--all-failed"}, db_path_);
    EXPECT_EQ(retry.exit_code, 1) << retry.err;
    EXPECT_THAT(retry.err, testing::HasSubstr(db_path_));
  }
  // Nothing half-written: no order, no outbox row, no request key.
  EXPECT_EQ(count_rows(db_path_, "orders"), 0);
  EXPECT_EQ(count_rows(db_path_, "outbox"), 0);
  EXPECT_EQ(count_rows(db_path_, "request_keys"), 0);

  // The lock gone, the same request is a new order, not a replay.
  auto r = outbox({"place-order", "--sku", "apple", "--qty", "2",
                   "--request-id", "r-locked"},
                  db_path_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(json::parse(r.out).at("replayed").get<bool>());
  EXPECT_EQ(count_rows(db_path_, "orders"), 1);
  EXPECT_EQ(count_rows(db_path_, "outbox"), 1);
}

TEST_F(FaultDatabase, RunBacksOffWhileLockedAndFinishesAfter) {
  ASSERT_EQ(outbox({"init"}, db_path_).exit_code, 0);
  auto lock = std::make_unique<write_lock>(db_path_);
  child_process run{
      outbox_argv(args({"run", "--relays", "2", "--consumers", "1", "--orders",
                        "300", "--until-drained", "--json"},
                       db_path_)),
      dir_.path().string()};
  // Both the writer and the relays meet the lock and say so.
  EXPECT_TRUE(run.wait_for_stderr("not committed", 15'000));
  EXPECT_TRUE(run.wait_for_stderr("database trouble, backing off", 15'000));
  EXPECT_EQ(count_rows(db_path_, "orders"), 0);
  lock.reset();

  auto r = run.wait(60'000);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto report = json::parse(r.out);
  EXPECT_TRUE(report.at("ok").get<bool>()) << report.dump(2);
  EXPECT_EQ(report.at("orders"), 300);
  // Rode it out by backing off, not by crashing and being restarted.
  EXPECT_EQ(report.at("relay_restarts"), 0);
  EXPECT_EQ(report.at("consumer_restarts"), 0);
  auto figures = expect_pipeline_intact(
      {db_path_, redis_->endpoint(), config_path_, dir_.path().string()});
  EXPECT_EQ(figures.orders, 300);
}

/// A database path that cannot work, and what the error must say.
struct bad_path {
  const char* name;
  std::string db;
  std::string fragment;
};

TEST_F(FaultDatabase, UnusablePathsGiveClearErrorsAndCreateNothing) {
  auto missing = dir_.file("missing");
  auto plain_file = dir_.file("plain.txt");
  std::ofstream{plain_file} << "not a folder";
  auto folder = dir_.file("folder.db");
  fs::create_directory(folder);
  std::vector<bad_path> cases = {
      {"folder_missing", missing + "/app.db",
       "folder " + missing + " does not exist"},
      {"parent_is_a_file", plain_file + "/app.db", "is not a folder"},
      {"path_is_a_folder", folder, "it is a folder, not a file"},
  };
  auto before = [&] {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator{dir_.path()})
      names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  };
  auto listing = before();
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    for (auto command : std::vector<std::vector<std::string>>{
             {"init"},
             {"place-order", "--sku", "apple", "--qty", "1"},
             {"run", "--relays", "1", "--consumers", "1", "--orders", "5",
              "--until-drained"},
             {"status"},
             {"verify"},
             {"retry", "--all-failed"}}) {
      auto r = outbox(command, c.db);
      EXPECT_EQ(r.exit_code, 1) << command[0] << ": " << r.err;
      // Commands that create the database say what is wrong with the path;
      // the others refuse a database that is not there ("run init").
      bool creates = command[0] == "init" || command[0] == "place-order" ||
                     command[0] == "run";
      if (creates) {
        EXPECT_THAT(r.err, testing::HasSubstr(c.fragment))
            << command[0] << ": " << r.err;
      }
      EXPECT_THAT(r.err, testing::HasSubstr(c.db))
          << command[0] << ": " << r.err;
    }
    EXPECT_EQ(before(), listing) << "something was created";
    EXPECT_TRUE(fs::is_empty(folder));
  }

  // The trouble ends (the folder appears): the same command works.
  fs::create_directory(missing);
  auto r = outbox({"place-order", "--sku", "apple", "--qty", "1"},
                  missing + "/app.db");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(count_rows(missing + "/app.db", "orders"), 1);
}

TEST_F(FaultDatabase, UnopenableWalFileFailsWithoutWriting) {
  ASSERT_EQ(outbox({"place-order", "--sku", "pear", "--qty", "3"}, db_path_)
                .exit_code,
            0);
  // Checkpointed and closed: app.db holds the order, no -wal file is left.
  ASSERT_FALSE(fs::exists(db_path_ + "-wal"));
  // A folder where SQLite must create the WAL file: nothing can be written
  // (the closest to a full or broken disk that works for root too).
  fs::create_directory(db_path_ + "-wal");
  auto r = outbox({"place-order", "--sku", "pear", "--qty", "3"}, db_path_);
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.err, testing::HasSubstr(db_path_));
  auto run = outbox({"run", "--relays", "1", "--consumers", "1", "--orders",
                     "5", "--until-drained"},
                    db_path_);
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_THAT(run.err, testing::HasSubstr(db_path_));

  // Trouble over: the order of before is there, nothing else was written.
  fs::remove(db_path_ + "-wal");
  EXPECT_EQ(count_rows(db_path_, "orders"), 1);
  EXPECT_EQ(count_rows(db_path_, "outbox"), 1);
  auto again = outbox({"place-order", "--sku", "pear", "--qty", "3"}, db_path_);
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(count_rows(db_path_, "orders"), 2);
}

TEST_F(FaultDatabase, ReadOnlyFileIsRefusedNamingIt) {
  if (::geteuid() == 0)
    GTEST_SKIP() << "root ignores file modes; the WAL case covers root";
  ASSERT_EQ(outbox({"init"}, db_path_).exit_code, 0);
  ASSERT_EQ(::chmod(db_path_.c_str(), 0444), 0);
  auto r = outbox({"place-order", "--sku", "fig", "--qty", "1"}, db_path_);
  ::chmod(db_path_.c_str(), 0644);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, testing::HasSubstr(db_path_));
  EXPECT_THAT(r.err, testing::HasSubstr("read-only"));
  EXPECT_EQ(count_rows(db_path_, "orders"), 0);
}

} // namespace
} // namespace outbox::test
