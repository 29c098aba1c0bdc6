#include "fuzz/checks.hpp"
#include "support/build_paths.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

using check = std::function<std::optional<std::string>(const std::string&)>;

/// Every file under fuzz/corpus/<target> and fuzz/regressions/<target>.
std::vector<fs::path> saved_inputs(const std::string& target) {
  std::vector<fs::path> inputs;
  const fs::path root = fs::path{outbox::test::source_dir()} / "fuzz";
  for (const char* kind : {"corpus", "regressions"}) {
    auto dir = root / kind / target;
    if (!fs::is_directory(dir))
      continue;
    for (const auto& item : fs::directory_iterator(dir))
      if (item.is_regular_file())
        inputs.push_back(item.path());
  }
  return inputs;
}

std::string read_bytes(const fs::path& path) {
  std::ifstream in{path, std::ios::binary};
  return {std::istreambuf_iterator<char>{in}, std::istreambuf_iterator<char>{}};
}

void replay(const std::string& target, const check& run) {
  auto inputs = saved_inputs(target);
  // The seed corpus is checked in: none found means a wrong path.
  ASSERT_FALSE(inputs.empty()) << "no inputs for " << target;
  for (const auto& path : inputs) {
    SCOPED_TRACE(path.string());
    auto problem = run(read_bytes(path));
    EXPECT_FALSE(problem.has_value()) << *problem;
  }
}

} // namespace

TEST(FuzzRegression, EntryInputs) {
  replay("entry", outbox::fuzz::check_entry);
}

TEST(FuzzRegression, ConfigInputs) {
  replay("config", outbox::fuzz::check_config);
}
