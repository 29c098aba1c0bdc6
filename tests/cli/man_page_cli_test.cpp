#include "support/build_paths.hpp"
#include "support/file_checks.hpp"
#include "support/help_text.hpp"
#include "support/process.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

// The man page `cmake --install` puts in man1: outbox.1, which help2man
// makes from `outbox --help` and `outbox --version` when the build runs
// (CMakeLists.txt). `man outbox` must list every command the binary has.
// A build folder without the page fails here naming why, never skips: CI
// installs help2man (OUTBOX_PACKAGES), so a missing page there is a fault.

namespace outbox::test {
namespace {

namespace fs = std::filesystem;

/// The value CMakeCache.txt of the build folder holds for `key` (a
/// "KEY:TYPE=VALUE" line), or "" when it has none.
std::string man_page_cache_value(const std::string& key) {
  std::istringstream lines{text_of(fs::path{build_dir()} / "CMakeCache.txt")};
  for (std::string line; std::getline(lines, line);)
    if (line.rfind(key + ":", 0) == 0)
      return line.substr(line.find('=') + 1);
  return "";
}

/// Why the build folder has no outbox.1, and what makes one.
std::string why_no_man_page() {
  auto help2man = man_page_cache_value("HELP2MAN");
  if (help2man.empty() || help2man.find("NOTFOUND") != std::string::npos)
    return "help2man was not found when this build folder was configured "
           "(HELP2MAN in CMakeCache.txt: '" +
           help2man +
           "'), so the build skipped the man page: apt-get install help2man "
           "(it is in OUTBOX_PACKAGES, scripts/lib/common.sh; scripts/test "
           "installs it), then configure and build again";
  return "help2man is " + help2man +
         " but the page was not built: build the target outbox_man_page "
         "(cmake --build " +
         build_dir() + " builds it, and so does building outbox_tests)";
}

/// The commands listed under "Subcommands:" in `outbox --help`.
std::vector<std::string> man_page_expected_commands() {
  auto help = run_outbox({"--help"});
  EXPECT_EQ(help.exit_code, 0) << help.err;
  return subcommands_in(help.out);
}

/// The tags of the page's tagged paragraphs (the line after each .TP), as
/// a reader sees them: roff's "\-" is a '-'.
std::set<std::string> man_page_entries(const std::string& roff) {
  std::set<std::string> tags;
  std::istringstream lines{roff};
  bool tag_next = false;
  for (std::string line; std::getline(lines, line);) {
    if (tag_next)
      tags.insert(std::regex_replace(line, std::regex{R"(\\-)"}, "-"));
    tag_next = line == ".TP";
  }
  return tags;
}

TEST(CliManPage, NamesEveryCommandOfTheHelpAndTheVersion) {
  const auto page = fs::path{build_dir()} / "outbox.1";
  ASSERT_TRUE(fs::exists(page))
      << page.string() << " does not exist: " << why_no_man_page();
  const auto roff = text_of(page);

  auto commands = man_page_expected_commands();
  ASSERT_GE(commands.size(), 12u) << "outbox --help lists too few commands";
  auto entries = man_page_entries(roff);
  for (const auto& command : commands)
    EXPECT_EQ(entries.count(command), 1u)
        << "the man page has no entry for `outbox " << command
        << "`: it is older than the binary, or help2man read another "
           "--help";

  // Its header names the binary's own version, as help2man read it.
  auto version = run_outbox({"--version"});
  ASSERT_EQ(version.exit_code, 0) << version.err;
  auto line = version.out.substr(0, version.out.find('\n'));
  EXPECT_NE(roff.find(".TH OUTBOX \"1\""), std::string::npos) << roff;
  EXPECT_NE(roff.find('"' + line + '"'), std::string::npos)
      << "no \"" << line << "\" in the page's header";
}

} // namespace
} // namespace outbox::test
