// docs/tutorial.md as a reader runs it: every ```sh block of the page, in
// order, in one bash (set -euo pipefail, so a command that fails fails the
// test), from a folder laid out as the repository's root (its scripts/ and
// docs/ linked in, var/ its own), with the private Redis and PostgreSQL of
// scripts/redis and scripts/pg on free ports. A ```text block right after a
// ```sh block is that block's whole stdout, compared exactly: the page
// cannot show what the commands do not print.

#include "tests/scripts/script_fixture.hpp"

#include <gmock/gmock.h>

#include <regex>
#include <sstream>

namespace outbox::test {
namespace {

/// A fenced block of the page: its language and text.
struct fenced_block {
  std::string language;
  std::string text;
};

std::vector<fenced_block> fenced_blocks(const std::string& page) {
  std::vector<fenced_block> blocks;
  std::istringstream lines{page};
  std::string line;
  fenced_block* open = nullptr;
  while (std::getline(lines, line)) {
    if (line.rfind("```", 0) == 0) {
      if (open) {
        open = nullptr;
      } else {
        blocks.push_back({line.substr(3), ""});
        open = &blocks.back();
      }
    } else if (open) {
      open->text += line + "\n";
    }
  }
  return blocks;
}

/// A sh block to run, and the stdout the page shows for it ("" and
/// `shown` false when it shows none).
struct step {
  std::string commands;
  std::string shown;
  bool has_shown = false;
};

std::vector<step> steps_of(const std::vector<fenced_block>& blocks) {
  std::vector<step> steps;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    if (blocks[i].language != "sh")
      continue;
    step s{blocks[i].text, "", false};
    if (i + 1 < blocks.size() && blocks[i + 1].language == "text") {
      s.shown = blocks[i + 1].text;
      s.has_shown = true;
    }
    steps.push_back(s);
  }
  return steps;
}

std::string marker(std::size_t index) {
  return "@@ tutorial step " + std::to_string(index) + " @@\n";
}

class E2ETutorial : public script_fixture {
protected:
  E2ETutorial() {
    let_postgres_through();
    std::filesystem::create_directory_symlink(
        std::filesystem::path{source_dir()} / "scripts",
        tmp_.path() / "scripts");
    std::filesystem::create_directory_symlink(
        std::filesystem::path{source_dir()} / "docs", tmp_.path() / "docs");
  }

  int pg_port_ = free_loopback_port();
};

TEST_F(E2ETutorial, EveryCommandOfThePageRunsAndPrintsWhatThePageShows) {
  auto steps = steps_of(fenced_blocks(
      text_of(std::filesystem::path{source_dir()} / "docs" / "tutorial.md")));
  ASSERT_GE(steps.size(), 6u) << "docs/tutorial.md lost its commands";

  std::string script = "set -euo pipefail\n";
  for (std::size_t i = 0; i < steps.size(); ++i)
    script += "printf '%s' '" + marker(i) + "'\n" + steps[i].commands;
  auto path = tmp_.file("tutorial.sh");
  std::ofstream{path} << script;

  auto r = isolated({"/bin/bash", path},
                    {"OUTBOX_PG_PORT=" + std::to_string(pg_port_)}, 300'000);
  ASSERT_EQ(r.exit_code, 0) << "stdout:\n" << r.out << "\nstderr:\n" << r.err;

  // Each step's stdout: from its marker to the next one.
  for (std::size_t i = 0; i < steps.size(); ++i) {
    auto begin = r.out.find(marker(i));
    ASSERT_NE(begin, std::string::npos) << "step " << i << " never ran";
    begin += marker(i).size();
    auto end = i + 1 < steps.size() ? r.out.find(marker(i + 1)) : r.out.size();
    ASSERT_NE(end, std::string::npos);
    if (steps[i].has_shown) {
      EXPECT_EQ(r.out.substr(begin, end - begin), steps[i].shown)
          << "step " << i << ":\n"
          << steps[i].commands;
    }
  }
}

} // namespace
} // namespace outbox::test
