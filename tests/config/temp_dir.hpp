#pragma once

// A private temporary directory for the config tests, removed with its
// contents.

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <system_error>

namespace config_test {

/// A private temporary directory, removed with its contents.
class temp_dir {
public:
  temp_dir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "outbox-config-XXXXXX")
            .string();
    if (::mkdtemp(pattern.data()) == nullptr)
      throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~temp_dir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;

  std::string write(const std::string& name, const std::string& text) const {
    auto file = (path_ / name).string();
    std::ofstream out(file, std::ios::binary);
    out << text;
    return file;
  }

  const std::filesystem::path& path() const { return path_; }

private:
  std::filesystem::path path_;
};

} // namespace config_test
