// The helpers that keep outbox's files to their owner on a shared host:
// modes, links, unsafe folders.

#include "storage/private_files.hpp"
#include "support/file_checks.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <fstream>

namespace outbox::test {
namespace {

namespace fs = std::filesystem;
using namespace outbox::storage;

TEST(StoragePrivateFiles, WriteReplacesALinkInsteadOfWritingThroughIt) {
  scoped_umask usual{022};
  temp_dir dir{"outbox-private"};
  auto victim = dir.file("victim");
  std::ofstream{victim} << "precious";
  auto link = dir.path() / "report.txt";
  fs::create_symlink(victim, link);

  write_file_replacing(link, "the report\n");

  EXPECT_EQ(text_of(victim), "precious");
  EXPECT_FALSE(fs::is_symlink(link));
  EXPECT_EQ(text_of(link), "the report\n");
  EXPECT_EQ(mode_of(link), 0600);
  // No temporary file left next to it.
  EXPECT_EQ(std::distance(fs::directory_iterator{dir.path()},
                          fs::directory_iterator{}),
            2);
}

TEST(StoragePrivateFiles, WriteFailureNamesTheFileAndLeavesNothing) {
  temp_dir dir{"outbox-private"};
  auto folder = dir.path() / "a-folder";
  fs::create_directory(folder);
  try {
    write_file_replacing(folder, "text");
    FAIL() << "renaming a file over a folder succeeded";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string{e.what()}.find(folder.string()), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(std::distance(fs::directory_iterator{dir.path()},
                          fs::directory_iterator{}),
            1);
}

TEST(StoragePrivateFiles, CreatedFilesAndFoldersAreTheOwnersOnly) {
  scoped_umask usual{022};
  temp_dir dir{"outbox-private"};
  auto deep = dir.path() / "a" / "b";
  create_private_folders(deep);
  EXPECT_EQ(mode_of(dir.path() / "a"), 0700);
  EXPECT_EQ(mode_of(deep), 0700);
  auto file = deep / "app.db";
  EXPECT_TRUE(create_private_file(file));
  EXPECT_EQ(mode_of(file), 0600);
  // An existing file is left as it is.
  fs::permissions(file, fs::perms::owner_all);
  EXPECT_TRUE(create_private_file(file));
  EXPECT_EQ(mode_of(file), 0700);
}

TEST(StoragePrivateFiles, CreateDoesNotFollowALink) {
  temp_dir dir{"outbox-private"};
  auto target = dir.file("elsewhere.db");
  auto link = dir.path() / "app.db";
  fs::create_symlink(target, link);
  EXPECT_TRUE(create_private_file(link)); // something is there already
  EXPECT_FALSE(fs::exists(target));
  EXPECT_FALSE(create_private_file(dir.path() / "missing" / "app.db"));
}

TEST(StoragePrivateFiles, UnsafeFolders) {
  temp_dir dir{"outbox-private"};
  EXPECT_EQ(unsafe_folder(dir.path()), std::nullopt);
  fs::permissions(dir.path(), fs::perms::all);
  auto open = unsafe_folder(dir.path());
  ASSERT_TRUE(open);
  EXPECT_NE(open->find("0777"), std::string::npos) << *open;
  EXPECT_NE(open->find("sticky"), std::string::npos) << *open;
  fs::permissions(dir.path(), fs::perms::all | fs::perms::sticky_bit);
  EXPECT_EQ(unsafe_folder(dir.path()), std::nullopt);
  fs::permissions(dir.path(), fs::perms::owner_all);
  if (::geteuid() == 0) {
    ASSERT_EQ(::chown(dir.path().c_str(), 65534, 65534), 0);
    auto theirs = unsafe_folder(dir.path());
    ASSERT_TRUE(theirs);
    EXPECT_NE(theirs->find("uid 65534"), std::string::npos) << *theirs;
    ASSERT_EQ(::chown(dir.path().c_str(), 0, 0), 0);
  }
}

TEST(StoragePrivateFiles, TightenOnlyAnOpenFileOfOurs) {
  scoped_umask usual{022};
  temp_dir dir{"outbox-private"};
  auto file = dir.file("old.db");
  std::ofstream{file} << "x";
  fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write |
                            fs::perms::group_read | fs::perms::others_read);
  EXPECT_EQ(tighten_to_private(file), 0644u);
  EXPECT_EQ(mode_of(file), 0600);
  EXPECT_EQ(tighten_to_private(file), std::nullopt); // already private
  auto link = dir.path() / "link.db";
  fs::create_symlink(file, link);
  fs::permissions(file, fs::perms::all);
  EXPECT_EQ(tighten_to_private(link), std::nullopt); // a link: not followed
  EXPECT_EQ(mode_of(file), 0777);
  EXPECT_EQ(octal_mode(0644), "0644");
}

} // namespace
} // namespace outbox::test
