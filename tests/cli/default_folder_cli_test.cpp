// The default database's folder (var/ for var/outbox.db) is created by the
// commands that write, so the README's first command works in a fresh
// clone; a folder the user named is refused when missing, by every writing
// command alike, and nothing is created for it.

#include "support/file_checks.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace outbox::test {
namespace {

namespace fs = std::filesystem;

class CliDefaultFolder : public ::testing::Test {
protected:
  /// outbox in the empty working folder, without --db.
  process_result outbox(const std::vector<std::string>& args) {
    return run_outbox(args, dir_.path().string());
  }

  fs::path var() const { return dir_.path() / "var"; }

  temp_dir dir_{"outbox-default-folder"};
};

TEST_F(CliDefaultFolder, InitCreatesVarPrivateAndTheDatabase) {
  scoped_umask usual{022};
  auto r = outbox({"init"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(mode_of(var()), 0700);
  EXPECT_TRUE(fs::is_regular_file(var() / "outbox.db"));
  EXPECT_EQ(mode_of(var() / "outbox.db"), 0600);
}

TEST_F(CliDefaultFolder, PlaceOrderCreatesVarAndTheDatabase) {
  scoped_umask usual{022};
  auto r = outbox(
      {"place-order", "--sku", "apple", "--qty", "1", "--request-id", "r-1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(mode_of(var()), 0700);
  EXPECT_TRUE(fs::is_regular_file(var() / "outbox.db"));
}

TEST_F(CliDefaultFolder, ReadingCommandsStillRefuseAMissingDatabase) {
  for (const char* command : {"status", "verify", "failed"}) {
    auto r = outbox({command});
    EXPECT_EQ(r.exit_code, 1) << command << ": " << r.err;
    EXPECT_THAT(r.err, testing::HasSubstr("run `outbox init` first"));
  }
  EXPECT_FALSE(fs::exists(var()));
}

/// What a writing command says for a named folder that does not exist.
void expect_refused_folder(const process_result& r, const std::string& what) {
  EXPECT_EQ(r.exit_code, 1) << what << ": " << r.err;
  EXPECT_THAT(r.err, testing::HasSubstr(
                         "outbox: database error (io): cannot open database "
                         "nodir/x.db: folder nodir does not exist"))
      << what << ": " << r.err;
  EXPECT_TRUE(r.out.empty()) << what << ": " << r.out;
}

TEST_F(CliDefaultFolder, ANamedMissingFolderIsRefusedAndNotCreated) {
  expect_refused_folder(outbox({"init", "--db", "nodir/x.db"}), "init");
  expect_refused_folder(outbox({"place-order", "--db", "nodir/x.db", "--sku",
                                "apple", "--qty", "1", "--request-id", "r-1"}),
                        "place-order");
  // The same path from a config file is just as explicit.
  fs::create_directory(dir_.path() / "config");
  std::ofstream{dir_.path() / "config" / "outbox.json"}
      << R"({"db": {"path": "nodir/x.db"}})";
  expect_refused_folder(outbox({"init"}), "init with db.path");
  EXPECT_FALSE(fs::exists(dir_.path() / "nodir"));
  EXPECT_FALSE(fs::exists(var()));
}

TEST_F(CliDefaultFolder, BenchFollowsTheRuleOfInit) {
  // Refused before any stage, so no Redis is needed to see it.
  expect_refused_folder(outbox({"bench", "--quick", "--db", "nodir/x.db"}),
                        "bench");
  EXPECT_FALSE(fs::exists(dir_.path() / "nodir"));
}

} // namespace
} // namespace outbox::test
