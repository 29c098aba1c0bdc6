#include "support/build_paths.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

// A quoted include is looked up next to the including file before the
// include path, so a relative one ("sqlite/x.hpp" from storage/) walks
// past the stubs cmake/Layering.cmake puts first on a library's path.
// Every quoted include of the project is therefore written from the source
// root: its first folder is a top folder of the project and the file is
// there ("storage/sqlite/x.hpp", "tests/broker/redis_fixture.hpp").
//
// tests/ has one more form: "support/..." names tests/support, which is on
// the test binary's include path (CMakeLists.txt adds tests/). No top
// folder is called support, so it cannot be mistaken for a project path;
// every other helper under tests/ is named from the root.

namespace outbox::test {
namespace {

namespace fs = std::filesystem;

/// A build folder (CMake's cache is there) or a hidden one (.git): no
/// project sources.
bool outside_project_sources(const fs::path& folder) {
  auto name = folder.filename().string();
  return (!name.empty() && name.front() == '.') ||
         fs::exists(folder / "CMakeCache.txt");
}

bool project_source_file(const fs::path& file) {
  auto extension = file.extension().string();
  return extension == ".cpp" || extension == ".hpp" || extension == ".h";
}

/// Every C++ source and header under `root`, outside build folders.
std::vector<fs::path> project_sources_under(const fs::path& root) {
  std::vector<fs::path> files;
  for (auto it = fs::recursive_directory_iterator{root};
       it != fs::recursive_directory_iterator{}; ++it) {
    if (it->is_directory() && outside_project_sources(it->path()))
      it.disable_recursion_pending();
    else if (it->is_regular_file() && project_source_file(it->path()))
      files.push_back(it->path());
  }
  return files;
}

/// True when `include` is a plain relative path (no "." or ".."), its
/// first folder is one of the project's top folders, and the file is there.
bool written_from_root(const fs::path& root, const std::string& include) {
  fs::path path{include};
  if (include.empty() || path.is_absolute())
    return false;
  for (const auto& part : path)
    if (part == "." || part == ".." || part.empty())
      return false;
  auto top = root / *path.begin();
  return fs::is_directory(top) && !outside_project_sources(top) &&
         fs::is_regular_file(root / path);
}

/// True for "support/..." from a file under tests/: tests/support.
bool names_test_support(const fs::path& root, const std::string& file,
                        const std::string& include) {
  return file.rfind("tests/", 0) == 0 && include.rfind("support/", 0) == 0 &&
         written_from_root(root, "tests/" + include);
}

TEST(ArchitectureIncludePaths, EveryQuotedIncludeIsWrittenFromTheSourceRoot) {
  const fs::path root{source_dir()};
  ASSERT_FALSE(fs::exists(root / "support"))
      << "a top folder named support makes \"support/...\" in tests/ "
         "ambiguous: rename it or change the rule of this test";
  static const std::regex quoted{R"re(^\s*#\s*include\s*"([^"]*)")re"};
  int checked = 0;
  std::string wrong;
  for (const auto& path : project_sources_under(root)) {
    auto file = path.lexically_relative(root).generic_string();
    std::ifstream in{path};
    int number = 0;
    for (std::string line; std::getline(in, line);) {
      ++number;
      std::smatch m;
      if (!std::regex_search(line, m, quoted))
        continue;
      ++checked;
      auto include = m[1].str();
      if (!written_from_root(root, include) &&
          !names_test_support(root, file, include))
        wrong += file + ":" + std::to_string(number) + ": #include \"" +
                 include + "\"\n";
    }
  }
  // The walk found the project at all.
  EXPECT_GT(checked, 1000) << "in " << root;
  EXPECT_TRUE(wrong.empty())
      << "quoted includes not written from the source root (a top folder, "
         "then the path; \"support/...\" only in tests/):\n"
      << wrong;
}

} // namespace
} // namespace outbox::test
