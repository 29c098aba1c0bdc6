#pragma once

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <system_error>

namespace outbox::test {

/// A fresh directory under $TMPDIR (or /tmp), created with mkdtemp and removed
/// with everything in it when the object is destroyed.
class temp_dir {
public:
  explicit temp_dir(const std::string& prefix = "outbox-test") {
    std::filesystem::path base = "/tmp";
    if (const char* tmpdir = std::getenv("TMPDIR"); tmpdir && *tmpdir)
      base = tmpdir;
    auto pattern = (base / (prefix + "-XXXXXX")).string();
    if (::mkdtemp(pattern.data()) == nullptr)
      throw std::runtime_error("mkdtemp " + pattern + ": " +
                               std::strerror(errno));
    path_ = pattern;
  }

  ~temp_dir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }

  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;

  /// The directory itself.
  const std::filesystem::path& path() const { return path_; }

  /// A path inside the directory, as a string (for db_options::path).
  std::string file(const std::string& name) const {
    return (path_ / name).string();
  }

  /// Writes `text` to a file inside the directory; returns its path.
  std::string write(const std::string& name, const std::string& text) const {
    auto path = file(name);
    std::ofstream{path, std::ios::binary} << text;
    return path;
  }

private:
  std::filesystem::path path_;
};

} // namespace outbox::test
