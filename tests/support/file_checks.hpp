#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace outbox::test {

/// The whole content of a file (empty when it cannot be read).
inline std::string text_of(const std::filesystem::path& path) {
  std::ifstream in{path};
  return {std::istreambuf_iterator<char>{in}, {}};
}

/// The permission bits of `path` itself (a link is not followed), or -1
/// when it does not exist.
inline int mode_of(const std::filesystem::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0)
    return -1;
  return static_cast<int>(st.st_mode & 07777);
}

/// What is under `dir` (recursively) whose mode is not private: a folder
/// other than 0700 or a file other than 0600, as "path 0644" lines.
inline std::vector<std::string>
not_private_under(const std::filesystem::path& dir) {
  std::vector<std::string> open;
  for (const auto& entry : std::filesystem::recursive_directory_iterator{dir}) {
    int expected = entry.is_directory() ? 0700 : 0600;
    int mode = mode_of(entry.path());
    if (mode != expected) {
      char octal[16];
      std::snprintf(octal, sizeof octal, " %04o", mode);
      open.push_back(entry.path().string() + octal);
    }
  }
  return open;
}

/// Sets the process's umask for the life of this object: the tests that
/// check modes run their children under the usual 022, so it is outbox that
/// makes its files private, not an inherited umask.
class scoped_umask {
public:
  explicit scoped_umask(mode_t mask) : previous_(::umask(mask)) {}
  ~scoped_umask() { ::umask(previous_); }
  scoped_umask(const scoped_umask&) = delete;
  scoped_umask& operator=(const scoped_umask&) = delete;

private:
  mode_t previous_;
};

} // namespace outbox::test
