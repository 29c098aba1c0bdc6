#include "support/build_paths.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

// ARCHITECTURE.md's layer tables are generated from the FORBID lists of
// outbox_layer() in CMakeLists.txt: every configure writes them to
// layering/layers.md in the build folder (cmake/Layering.cmake), and the
// target architecture_layers copies them into the document, between
// <!-- layers:begin --> and <!-- layers:end -->. A FORBID list changed
// without the document fails here.

namespace outbox::test {
namespace {

std::string whole_file(const std::string& path) {
  std::ifstream in{path};
  EXPECT_TRUE(in) << "cannot read " << path;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// What stands between the markers, or "" without them.
std::string generated_layer_part(const std::string& document) {
  const std::string begin = "<!-- layers:begin -->\n";
  const std::string end = "<!-- layers:end -->\n";
  auto from = document.find(begin);
  auto to = document.find(end);
  if (from == std::string::npos || to == std::string::npos || to < from)
    return "";
  from += begin.size();
  return document.substr(from, to - from);
}

TEST(ArchitectureLayerTable, MatchesTheFORBIDListsOfTheBuild) {
  auto expected = whole_file(build_dir() + "/layering/layers.md");
  ASSERT_FALSE(expected.empty());
  auto documented =
      generated_layer_part(whole_file(source_dir() + "/ARCHITECTURE.md"));
  ASSERT_FALSE(documented.empty())
      << "ARCHITECTURE.md has no lines <!-- layers:begin --> and "
         "<!-- layers:end --> around its layer tables";
  EXPECT_TRUE(documented == expected)
      << "ARCHITECTURE.md's layer tables are not those of CMakeLists.txt's "
         "FORBID lists. Regenerate them with\n  cmake --build "
      << build_dir() << " --target architecture_layers\nThey should read:\n"
      << expected;
}

} // namespace
} // namespace outbox::test
