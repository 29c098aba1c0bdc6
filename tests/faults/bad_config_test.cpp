// Scenario 8 of the fault suite: bad configuration files and flags, through
// the real binary. Every case must exit 2 with a message naming the key,
// flag or file that is wrong, and create nothing: no database file, no
// folder.

#include "support/process.hpp"
#include "support/temp_dir.hpp"
#include "tests/faults/bad_config_cases.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <string>
#include <vector>

namespace outbox::test {
namespace {

namespace fs = std::filesystem;

class FaultBadConfig : public ::testing::TestWithParam<bad_input> {
protected:
  /// Everything under `root`, as relative paths.
  static std::vector<std::string> listing(const fs::path& root) {
    std::vector<std::string> names;
    for (const auto& entry : fs::recursive_directory_iterator{root})
      names.push_back(fs::relative(entry.path(), root).string());
    std::sort(names.begin(), names.end());
    return names;
  }

  temp_dir dir_{"outbox-badconfig"};
};

TEST_P(FaultBadConfig, ExitsTwoNamingTheCulpritAndCreatesNothing) {
  const auto& c = GetParam();
  // The command runs in an empty folder, so a database created at a
  // default relative path (var/outbox.db) would show up here too.
  auto work = dir_.path() / "work";
  fs::create_directory(work);
  auto db = (work / "app.db").string();
  std::string config;
  switch (c.source) {
  case config_source::none:
    break;
  case config_source::file:
    config = dir_.file("bad.json");
    std::ofstream{config} << c.text;
    break;
  case config_source::missing:
    config = dir_.file("absent.json");
    break;
  case config_source::folder:
    config = dir_.file("a-folder.json");
    fs::create_directory(config);
    break;
  case config_source::endless:
    config = "/dev/zero";
    break;
  }
  auto before = listing(dir_.path());

  auto args = c.command;
  bool has_db = std::find(args.begin(), args.end(), "--db") != args.end();
  if (!has_db)
    args.insert(args.end(), {"--db", db});
  // Nothing listens on port 1: a case that wrongly got past validation
  // would fail later with exit 1, not 2.
  if (std::find(args.begin(), args.end(), "--redis") == args.end())
    args.insert(args.end(), {"--redis", "127.0.0.1:1"});
  if (!config.empty())
    args.insert(args.end(), {"--config", config});

  auto r = run_outbox(args, work.string(), 30'000);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  for (auto mention : c.mentions) {
    if (mention == "<config>")
      mention = config;
    EXPECT_THAT(r.err, testing::HasSubstr(mention))
        << "stderr does not name '" << mention << "': " << r.err;
  }
  EXPECT_EQ(listing(dir_.path()), before) << "something was created";
  EXPECT_FALSE(fs::exists(db));
}

INSTANTIATE_TEST_SUITE_P(FaultCases, FaultBadConfig,
                         ::testing::ValuesIn(bad_inputs),
                         [](const ::testing::TestParamInfo<bad_input>& info) {
                           return std::string{info.param.name};
                         });

TEST(FaultBadConfigTable, HasAtLeastTwentyCases) {
  EXPECT_GE(bad_inputs.size(), 20u);
}

} // namespace
} // namespace outbox::test
