#include "support/build_paths.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

// Sizes a reader can take in (docs/layout.md: small files, one concern
// each): no source file over 400 lines, and no C++ function body over 150.
// Sources are the C++, SQL, Lua, shell and CMake files; docs and data are
// not. The function scanner relies on clang-format's layout: a top-level
// function starts at column 0 (namespace bodies are not indented), its
// body opens on a line ending in `{`, and it closes at the next line that
// is exactly `}`. Functions defined inside a class, and lambdas, count as
// part of what holds them.

namespace outbox::test {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t max_file_lines = 400;
constexpr std::size_t max_body_lines = 150;

/// Folders holding no project sources: hidden ones (.git) except .ci,
/// build folders (CMake's cache is there) and var/, the scripts' state.
bool holds_no_sized_sources(const fs::path& root, const fs::path& folder) {
  auto name = folder.filename().string();
  if (!name.empty() && name.front() == '.' && name != ".ci")
    return true;
  return fs::exists(folder / "CMakeCache.txt") || folder == root / "var";
}

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// A shell script without an extension (scripts/pg): its first line names
/// a shell.
bool shell_script(const fs::path& file) {
  std::ifstream in{file};
  std::string first;
  std::getline(in, first);
  return first.rfind("#!", 0) == 0 &&
         (ends_with(first, "sh") || ends_with(first, "bash"));
}

/// C++, SQL, Lua, shell or CMake.
bool sized_source(const fs::path& file) {
  auto name = file.filename().string();
  for (const char* suffix :
       {".cpp", ".hpp", ".h", ".sql", ".lua", ".sh", ".cmake", ".cmake.in"})
    if (ends_with(name, suffix))
      return true;
  return name == "CMakeLists.txt" ||
         (file.extension().empty() && shell_script(file));
}

/// Every sized source under `root`.
std::vector<fs::path> sized_sources_under(const fs::path& root) {
  std::vector<fs::path> files;
  for (auto it = fs::recursive_directory_iterator{root};
       it != fs::recursive_directory_iterator{}; ++it) {
    if (it->is_directory() && holds_no_sized_sources(root, it->path()))
      it.disable_recursion_pending();
    else if (it->is_regular_file() && sized_source(it->path()))
      files.push_back(it->path());
  }
  return files;
}

std::vector<std::string> lines_of(const fs::path& file) {
  std::ifstream in{file};
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  return lines;
}

bool is_cpp(const fs::path& file) {
  auto extension = file.extension().string();
  return extension == ".cpp" || extension == ".hpp" || extension == ".h";
}

/// A top-level function body: the line its declaration starts on (from 1)
/// and the lines between its braces.
struct function_body {
  std::size_t line;
  std::size_t lines;
};

/// A line at column 0 that can start a declaration (not a comment, a
/// preprocessor line or a closing brace).
bool starts_declaration(const std::string& line) {
  return !line.empty() && line.front() != ' ' && line.front() != '\t' &&
         line.front() != '#' && line.front() != '}' && line.rfind("//", 0) != 0;
}

bool opens_block(const std::string& line) {
  auto end = line.find_last_not_of(" \t");
  auto start = line.find_first_not_of(" \t");
  return end != std::string::npos && line[end] == '{' &&
         line.compare(start, 2, "//") != 0;
}

bool starts_with_word(const std::string& text, const std::string& word) {
  return text.rfind(word, 0) == 0 &&
         (text.size() == word.size() || text[word.size()] == ' ' ||
          text[word.size()] == '{');
}

/// The top-level function bodies of a clang-formatted C++ file. A
/// namespace's body is walked into; any other block that does not close
/// with a line that is exactly `}` is stepped over whole: a class, struct,
/// enum or union, or an initializer (closed by `};`).
std::vector<function_body>
top_level_bodies(const std::vector<std::string>& lines) {
  std::vector<function_body> bodies;
  std::optional<std::size_t> declaration;
  for (std::size_t at = 0; at < lines.size(); ++at) {
    if (starts_declaration(lines[at]))
      declaration = at;
    if (!declaration || !opens_block(lines[at]))
      continue;
    const auto& head = lines[*declaration];
    if (starts_with_word(head, "namespace") ||
        starts_with_word(head, "inline namespace") ||
        head.rfind("extern \"C\"", 0) == 0) {
      declaration.reset();
      continue;
    }
    auto close = at + 1;
    while (close < lines.size() &&
           (lines[close].empty() || lines[close].front() != '}'))
      ++close;
    if (close < lines.size() && lines[close] == "}")
      bodies.push_back({*declaration + 1, close - at - 1});
    declaration.reset();
    at = close;
  }
  return bodies;
}

TEST(ArchitectureSourceSizes, TheScannerMeasuresTopLevelFunctionBodies) {
  const std::vector<std::string> text{
      "namespace outbox {",                   // 1: walked into
      "struct lease {",                       // 2: stepped over
      "  int epoch() const {",                //
      "    return 1;",                        //
      "  }",                                  //
      "};",                                   //
      "const int fences[] = {",               // 7: an initializer
      "    1,",                               //
      "};",                                   //
      "int claim(int batch) {",               // 10: two lines
      "  auto take = [&] {",                  //
      "  };",                                 //
      "}",                                    //
      "template <typename T>",                // 14
      "void ack(T lease,",                    // 15: three lines
      "         int epoch) {",                //
      "  if (epoch)",                         //
      "    lease.ack();",                     //
      "  return;",                            //
      "}",                                    //
      "template <typename T> struct fence {", // 21: stepped over
      "  void check() {",                     //
      "  }",                                  //
      "};",                                   //
      "} // namespace outbox"};
  auto bodies = top_level_bodies(text);
  ASSERT_EQ(bodies.size(), 2u);
  EXPECT_EQ(bodies[0].line, 10u);
  EXPECT_EQ(bodies[0].lines, 2u);
  EXPECT_EQ(bodies[1].line, 15u);
  EXPECT_EQ(bodies[1].lines, 3u);
}

TEST(ArchitectureSourceSizes, NoSourceFileIsOver400Lines) {
  const fs::path root{source_dir()};
  int checked = 0;
  std::string over;
  for (const auto& path : sized_sources_under(root)) {
    ++checked;
    auto count = lines_of(path).size();
    if (count > max_file_lines)
      over += path.lexically_relative(root).generic_string() +
              ":1: " + std::to_string(count) + " lines\n";
  }
  // The walk found the project at all.
  EXPECT_GT(checked, 500) << "in " << root;
  EXPECT_TRUE(over.empty()) << "source files over " << max_file_lines
                            << " lines (split them by concern):\n"
                            << over;
}

TEST(ArchitectureSourceSizes, NoFunctionBodyIsOver150Lines) {
  const fs::path root{source_dir()};
  std::size_t functions = 0;
  std::string over;
  for (const auto& path : sized_sources_under(root)) {
    if (!is_cpp(path))
      continue;
    for (const auto& body : top_level_bodies(lines_of(path))) {
      ++functions;
      if (body.lines > max_body_lines)
        over += path.lexically_relative(root).generic_string() + ":" +
                std::to_string(body.line) + ": a body of " +
                std::to_string(body.lines) + " lines\n";
    }
  }
  EXPECT_GT(functions, 1000u) << "in " << root;
  EXPECT_TRUE(over.empty())
      << "functions whose body is over " << max_body_lines << " lines:\n"
      << over;
}

} // namespace
} // namespace outbox::test
