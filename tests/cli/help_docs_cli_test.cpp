#include "support/build_paths.hpp"
#include "support/help_text.hpp"
#include "support/process.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

// docs/commands.md is the reference: its table of commands must list every
// flag `outbox COMMAND --help` lists, for every command the binary has. A
// flag added to a command without its synopsis there fails here.

namespace outbox::test {
namespace {

/// The page's opening, up to its first section: the common flags, then the
/// table of commands.
std::string commands_page_table() {
  std::ifstream in{source_dir() + "/docs/commands.md"};
  std::ostringstream text;
  text << in.rdbuf();
  auto all = text.str();
  EXPECT_EQ(all.rfind("# Commands\n", 0), 0u)
      << "docs/commands.md does not open with # Commands";
  auto to = all.find("\n## ");
  return all.substr(0, to);
}

/// The long flags a --help text lists as options (not ones its
/// descriptions mention), without --help itself.
std::set<std::string> flags_in(const std::string& help) {
  std::set<std::string> flags;
  std::istringstream lines{help};
  static const std::regex option{R"(^\s+(?:-[a-zA-Z],)?(--[a-z][a-z0-9-]*))"};
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_search(line, m, option) && m[1].str() != "--help")
      flags.insert(m[1].str());
  }
  return flags;
}

/// `flag` as a word of `text` (so --db does not match --db-x).
bool mentions(const std::string& text, const std::string& flag) {
  for (auto at = text.find(flag); at != std::string::npos;
       at = text.find(flag, at + 1)) {
    auto after = at + flag.size();
    if (after == text.size() ||
        !(std::isalnum(static_cast<unsigned char>(text[after])) ||
          text[after] == '-'))
      return true;
  }
  return false;
}

/// The synopses (first cells) of the table rows for `outbox PATH`.
std::string synopses(const std::string& section, const std::string& path) {
  std::string out;
  std::istringstream lines{section};
  auto start = "| `outbox " + path;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(start, 0) != 0)
      continue;
    auto next = line[start.size()];
    if (next != ' ' && next != '`')
      continue;
    out += line.substr(0, line.find(" | ")) + "\n";
  }
  return out;
}

struct command_help {
  std::string path; // "run", "dead-letters replay"
  std::set<std::string> flags;
};

std::vector<command_help> every_command() {
  std::vector<command_help> out;
  auto top = run_outbox({"--help"});
  EXPECT_EQ(top.exit_code, 0) << top.err;
  std::vector<std::string> paths = subcommands_in(top.out);
  EXPECT_GE(paths.size(), 12u) << top.out;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    std::vector<std::string> args;
    std::istringstream words{paths[i]};
    for (std::string word; words >> word;)
      args.push_back(word);
    args.push_back("--help");
    auto help = run_outbox(args);
    EXPECT_EQ(help.exit_code, 0) << paths[i] << ": " << help.err;
    out.push_back({paths[i], flags_in(help.out)});
    for (const auto& sub : subcommands_in(help.out))
      paths.push_back(paths[i] + " " + sub);
  }
  return out;
}

TEST(CliHelpDocs, EveryFlagOfEveryCommandIsInTheCommandsPageSynopsis) {
  auto section = commands_page_table();
  auto commands = every_command();
  ASSERT_FALSE(commands.empty());

  // The flags nearly every command takes are described once, above the
  // table; the others belong in the command's own synopsis.
  std::set<std::string> common{"--config", "--db", "--redis", "--key-prefix",
                               "--log-level"};
  auto intro = section.substr(0, section.find("\n| command"));
  for (const auto& flag : common)
    EXPECT_TRUE(mentions(intro, flag)) << flag << " not above the table";

  for (const auto& command : commands) {
    auto rows = synopses(section, command.path);
    EXPECT_FALSE(rows.empty())
        << "no row for `outbox " << command.path << "` in docs/commands.md";
    for (const auto& flag : command.flags) {
      if (common.count(flag) != 0)
        continue;
      EXPECT_TRUE(mentions(rows, flag))
          << "outbox " << command.path << " --help lists " << flag
          << ", its synopsis in docs/commands.md does not:\n"
          << rows;
    }
  }
}

TEST(CliHelpDocs, HelpShowsDefaultsWithTheirConfigKeys) {
  auto run = run_outbox({"run", "--help"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_THAT(run.out, testing::HasSubstr("(default 2, run.relays)"));
  EXPECT_THAT(run.out, testing::HasSubstr("(default 4, broker.partitions)"));
  EXPECT_THAT(run.out, testing::HasSubstr("(default 0, crash.relay_pause)"));
  auto status = run_outbox({"status", "--help"});
  ASSERT_EQ(status.exit_code, 0) << status.err;
  EXPECT_THAT(status.out,
              testing::HasSubstr("(default var/outbox.db, db.path)"));
  EXPECT_THAT(status.out,
              testing::HasSubstr(
                  "(default 127.0.0.1:6379, redis.host and redis.port)"));
  EXPECT_THAT(status.out, testing::HasSubstr("(default warn, log.level)"));
}

TEST(CliHelpDocs, HelpCommandPrintsTheCommandsHelp) {
  for (std::vector<std::string> path : {std::vector<std::string>{"run"},
                                        {"retry"},
                                        {"dead-letters", "replay"}}) {
    auto flag_form = path;
    flag_form.push_back("--help");
    auto expected = run_outbox(flag_form);
    auto help_form = path;
    help_form.insert(help_form.begin(), "help");
    auto got = run_outbox(help_form);
    EXPECT_EQ(got.exit_code, 0) << got.err;
    EXPECT_EQ(got.out, expected.out) << path.front();
    EXPECT_NE(got.out.find("Usage: outbox " + path.front()), std::string::npos)
        << got.out;
  }
  auto top = run_outbox({"help"});
  EXPECT_EQ(top.exit_code, 0) << top.err;
  EXPECT_EQ(top.out, run_outbox({"--help"}).out);

  auto unknown = run_outbox({"help", "frobnicate"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_THAT(unknown.err,
              testing::HasSubstr("outbox: help: no command 'frobnicate'"));
  EXPECT_TRUE(unknown.out.empty()) << unknown.out;
}

TEST(CliHelpDocs, VersionComesFromTheProject) {
  const std::regex version{R"(^outbox \d+\.\d+\.\d+\n$)"};
  for (auto args : {std::vector<std::string>{"--version"}, {"version"}}) {
    auto r = run_outbox(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(std::regex_match(r.out, version)) << r.out;
  }
  EXPECT_EQ(run_outbox({"--version"}).out, run_outbox({"version"}).out);
}

} // namespace
} // namespace outbox::test
