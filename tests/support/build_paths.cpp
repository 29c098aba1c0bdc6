#include "support/build_paths.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace outbox::test {

namespace {

namespace fs = std::filesystem;

/// The folder of the running test binary: the build folder, which holds
/// the outbox binary and CMakeCache.txt beside it.
fs::path test_binary_folder() {
  return fs::read_symlink("/proc/self/exe").parent_path();
}

/// The source tree the build folder was configured from, as its
/// CMakeCache.txt records it.
std::string configured_source_dir() {
  const auto cache = test_binary_folder() / "CMakeCache.txt";
  std::ifstream in{cache};
  const std::string key = "outbox_SOURCE_DIR:STATIC=";
  for (std::string line; std::getline(in, line);)
    if (line.compare(0, key.size(), key) == 0)
      return line.substr(key.size());
  throw std::runtime_error{"no outbox_SOURCE_DIR in " + cache.string() +
                           ": set OUTBOX_TEST_SOURCE_DIR"};
}

std::string from_environment(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

} // namespace

const std::string& source_dir() {
  static const std::string dir = [] {
    auto given = from_environment("OUTBOX_TEST_SOURCE_DIR");
    return given.empty() ? configured_source_dir() : given;
  }();
  return dir;
}

const std::string& outbox_binary() {
  static const std::string binary = [] {
    auto given = from_environment("OUTBOX_TEST_BINARY");
    return given.empty() ? (test_binary_folder() / "outbox").string() : given;
  }();
  return binary;
}

const std::string& build_dir() {
  static const std::string dir = test_binary_folder().string();
  return dir;
}

} // namespace outbox::test
