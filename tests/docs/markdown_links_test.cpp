#include "support/build_paths.hpp"
#include "support/file_checks.hpp"

#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

// The documentation is split into pages that link to each other's
// sections. Every relative link `](path)` or `](path#anchor)` in README.md,
// ARCHITECTURE.md and docs/ must name a file that exists and, with an
// anchor, a heading of that page as GitHub names its anchors: a section
// moved or renamed without its links fails here.

namespace outbox::test {
namespace {

namespace fs = std::filesystem;

/// The Markdown pages whose links readers follow.
std::vector<fs::path> markdown_pages() {
  const fs::path root{source_dir()};
  std::vector<fs::path> pages{root / "README.md", root / "ARCHITECTURE.md"};
  for (const auto& entry : fs::recursive_directory_iterator{root / "docs"})
    if (entry.is_regular_file() && entry.path().extension() == ".md")
      pages.push_back(entry.path());
  return pages;
}

/// The lines of a page outside fenced code blocks, numbered from 1.
std::vector<std::pair<int, std::string>>
markdown_prose_lines(const std::string& text) {
  std::vector<std::pair<int, std::string>> prose;
  std::istringstream lines{text};
  bool fenced = false;
  int number = 0;
  for (std::string line; std::getline(lines, line);) {
    ++number;
    if (line.rfind("```", 0) == 0)
      fenced = !fenced;
    else if (!fenced)
      prose.emplace_back(number, line);
  }
  return prose;
}

/// GitHub's anchor for a heading's text: lower case, spaces to '-', and
/// every other character but letters, digits, '-' and '_' dropped (bytes
/// of non-ASCII letters kept).
std::string markdown_anchor_of(const std::string& heading) {
  std::string anchor;
  for (unsigned char c : heading) {
    if (c == ' ')
      anchor += '-';
    else if (std::isalnum(c) || c == '-' || c == '_' || c >= 0x80)
      anchor += static_cast<char>(std::tolower(c));
  }
  return anchor;
}

/// Every anchor a page's headings make; a repeated one gets "-1", "-2".
std::set<std::string> markdown_anchors(const fs::path& page) {
  static const std::regex heading{R"(^#{1,6} +(.*?) *$)"};
  std::set<std::string> anchors;
  std::map<std::string, int> seen;
  for (const auto& [number, line] : markdown_prose_lines(text_of(page))) {
    std::smatch m;
    if (!std::regex_match(line, m, heading))
      continue;
    auto anchor = markdown_anchor_of(m[1].str());
    auto repeats = seen[anchor]++;
    anchors.insert(repeats == 0 ? anchor
                                : anchor + "-" + std::to_string(repeats));
  }
  return anchors;
}

TEST(DocsLinks, EveryRelativeLinkLeadsToAPageAndHeading) {
  static const std::regex link{R"(\]\(([^)\s]+)\))"};
  static const std::regex scheme{R"(^[a-z][a-z0-9+.-]*:)"};
  const fs::path root{source_dir()};
  int checked = 0;
  for (const auto& page : markdown_pages()) {
    const auto name = page.lexically_relative(root).string();
    for (const auto& [number, line] : markdown_prose_lines(text_of(page))) {
      for (std::sregex_iterator it{line.begin(), line.end(), link}, end;
           it != end; ++it) {
        const auto target = (*it)[1].str();
        if (std::regex_search(target, scheme))
          continue;
        ++checked;
        const auto hash = target.find('#');
        const auto file = target.substr(0, hash);
        const auto dest = file.empty()
                              ? page
                              : (page.parent_path() / file).lexically_normal();
        const auto where = name + ":" + std::to_string(number) + ": " + target;
        if (!fs::exists(dest)) {
          ADD_FAILURE() << where << ": no such file";
          continue;
        }
        if (hash == std::string::npos)
          continue;
        EXPECT_EQ(dest.extension(), ".md") << where << ": an anchor of no page";
        EXPECT_EQ(markdown_anchors(dest).count(target.substr(hash + 1)), 1u)
            << where << ": no such heading in "
            << dest.lexically_relative(root).string();
      }
    }
  }
  EXPECT_GT(checked, 100) << "too few links found: is the pattern right?";
}

} // namespace
} // namespace outbox::test
