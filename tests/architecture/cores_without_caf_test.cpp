#include "support/build_paths.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <string>
#include <vector>

// The actors' decisions live in plain classes, actors/*_core.{hpp,cpp},
// which unit tests drive without an actor system (tests/cores). The
// layering cannot wall them off (they share actors/ with the actors, which
// include CAF), so this walks each core's project includes, transitively,
// and the source beside each header met (the helpers a core includes:
// relay_settle.hpp brings relay_settle.cpp), and fails on any CAF header
// met on the way; tests/cores likewise.

namespace outbox::test {
namespace {

namespace fs = std::filesystem;

/// The cores and their tests: where no path of includes may reach CAF.
std::vector<fs::path> caf_free_roots(const fs::path& root) {
  static const std::regex core_file{R"re(.*_core\.(hpp|cpp))re"};
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator{root / "actors"})
    if (std::regex_match(entry.path().filename().string(), core_file))
      files.push_back(entry.path());
  if (fs::is_directory(root / "tests" / "cores"))
    for (const auto& entry : fs::directory_iterator{root / "tests" / "cores"})
      files.push_back(entry.path());
  return files;
}

/// Follows the quoted includes from `file`; names in `found` each
/// "<file>: <caf include>" met, and what led there.
void walk_includes(const fs::path& root, const fs::path& file,
                   const std::string& trail, std::set<fs::path>& seen,
                   std::vector<std::string>& found) {
  if (!seen.insert(file).second)
    return;
  static const std::regex quoted{R"re(^\s*#\s*include\s*"([^"]*)")re"};
  static const std::regex caf{R"re(^\s*#\s*include\s*<caf/([^>]*)>)re"};
  std::ifstream in{file};
  auto name = file.lexically_relative(root).generic_string();
  auto here = trail.empty() ? name : trail + " -> " + name;
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    if (std::regex_search(line, m, caf))
      found.push_back(here + ": <caf/" + m[1].str() + ">");
    else if (std::regex_search(line, m, quoted) &&
             fs::is_regular_file(root / m[1].str()))
      walk_includes(root, root / m[1].str(), here, seen, found);
  }
  auto source = fs::path{file}.replace_extension(".cpp");
  if (file.extension() == ".hpp" && fs::is_regular_file(source))
    walk_includes(root, source, here, seen, found);
}

TEST(ArchitectureCores, NoCoreNorItsTestReachesCaf) {
  const fs::path root{source_dir()};
  auto roots = caf_free_roots(root);
  // The consumer's, the writer's, the relay's and the coordinator's cores,
  // a header and a source each.
  EXPECT_GE(roots.size(), 8u) << "in " << root;
  for (const char* core : {"relay_core.cpp", "coordinator_core.cpp"})
    EXPECT_EQ(std::count(roots.begin(), roots.end(), root / "actors" / core), 1)
        << core << " is walked";
  std::vector<std::string> found;
  for (const auto& file : roots) {
    std::set<fs::path> seen;
    walk_includes(root, file, "", seen, found);
  }
  std::string listed;
  for (const auto& f : found)
    listed += f + "\n";
  EXPECT_TRUE(found.empty()) << "CAF reached from a core:\n" << listed;
}

} // namespace
} // namespace outbox::test
