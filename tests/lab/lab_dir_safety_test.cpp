// `outbox lab` on a shared host: an output never writes through a link
// planted in its place, and a --dir another user controls is refused
// (exit 2) before anything is written.

#include "support/file_checks.hpp"
#include "tests/lab/lab_fixture.hpp"

#include <gmock/gmock.h>
#include <unistd.h>

namespace outbox::test {
namespace {

namespace fs = std::filesystem;

using LabDirSafety = lab_fixture;

TEST_F(LabDirSafety, ReportReplacesALinkInsteadOfOverwritingItsTarget) {
  step_ok("init");
  auto victim = tmp_.file("victim");
  std::ofstream{victim} << "precious\n";
  auto report = fs::path{dir_} / "report.txt";
  fs::create_symlink(victim, report);

  step_ok("report");

  EXPECT_EQ(text_of(victim), "precious\n");
  EXPECT_FALSE(fs::is_symlink(report));
  EXPECT_TRUE(fs::is_regular_file(report));
  EXPECT_THAT(text_of(report), testing::HasSubstr("orders="));
  EXPECT_EQ(mode_of(report), 0600);
}

TEST_F(LabDirSafety, WorldWritableDirWithoutStickyBitIsRefused) {
  fs::create_directory(dir_);
  fs::permissions(dir_, fs::perms::all);
  for (auto step : {"init", "report"}) {
    auto r = lab_step(step);
    EXPECT_EQ(r.exit_code, 2) << step << ": " << r.err;
    EXPECT_NE(r.err.find("refusing --dir " + dir_), std::string::npos) << r.err;
    EXPECT_THAT(r.err,
                testing::HasSubstr("world-writable without the sticky bit"));
  }
  EXPECT_TRUE(fs::is_empty(dir_));

  // With the sticky bit (as /tmp), only a file's owner may rename it: fine.
  fs::permissions(dir_, fs::perms::all | fs::perms::sticky_bit);
  step_ok("init");
  EXPECT_TRUE(exists("app.db"));
}

TEST_F(LabDirSafety, DirOfAnotherUserIsRefused) {
  if (::geteuid() != 0)
    GTEST_SKIP() << "needs root to give a folder to another uid";
  fs::create_directory(dir_);
  ASSERT_EQ(::chown(dir_.c_str(), 65534, 65534), 0);
  auto r = lab_all(dir_);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("refusing --dir " + dir_ +
                       ": it belongs to uid 65534, not to this user (uid 0)"),
            std::string::npos)
      << r.err;
  EXPECT_TRUE(fs::is_empty(dir_));
}

} // namespace
} // namespace outbox::test
