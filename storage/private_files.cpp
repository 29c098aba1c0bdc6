#include "storage/private_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <system_error>

namespace outbox::storage {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void throw_errno(const std::string& what, const fs::path& path) {
  throw std::system_error(errno, std::generic_category(),
                          what + " " + path.string());
}

/// Writes all of `text` to `fd`; false (errno set) on failure.
bool write_all(int fd, const std::string& text) {
  const char* at = text.data();
  auto left = text.size();
  while (left > 0) {
    auto n = ::write(fd, at, left);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return false;
    at += n;
    left -= static_cast<std::size_t>(n);
  }
  return true;
}

} // namespace

bool create_private_file(const fs::path& path) {
  // O_EXCL: an existing file, or a link (even one pointing nowhere), is
  // left alone rather than opened.
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
                  private_file_mode);
  if (fd < 0)
    return errno == EEXIST;
  ::close(fd);
  return true;
}

void create_private_folders(const fs::path& dir) {
  std::error_code ec;
  if (dir.empty() || fs::exists(dir, ec))
    return;
  create_private_folders(dir.parent_path());
  if (::mkdir(dir.c_str(), private_folder_mode) != 0 && errno != EEXIST)
    throw_errno("cannot create folder", dir);
}

void write_file_replacing(const fs::path& path, const std::string& text) {
  auto folder = path.parent_path().empty() ? fs::path{"."} : path.parent_path();
  // mkstemp creates the file 0600 and never opens an existing one.
  auto temporary =
      (folder / ("." + path.filename().string() + ".XXXXXX")).string();
  int fd = ::mkstemp(temporary.data());
  if (fd < 0)
    throw std::runtime_error("cannot write " + path.string() +
                             ": cannot create a temporary file in " +
                             folder.string() + ": " + std::strerror(errno));
  bool written = write_all(fd, text) && ::fsync(fd) == 0;
  int error = errno;
  if (::close(fd) != 0 && written) {
    written = false;
    error = errno;
  }
  // rename replaces a link at `path` itself, never the file it points to.
  if (written && ::rename(temporary.c_str(), path.c_str()) != 0) {
    written = false;
    error = errno;
  }
  if (!written) {
    ::unlink(temporary.c_str());
    throw std::runtime_error("cannot write " + path.string() + ": " +
                             std::strerror(error));
  }
}

std::optional<std::string> unsafe_folder(const fs::path& dir) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0)
    return std::nullopt;
  auto me = ::geteuid();
  if (st.st_uid != me)
    return "it belongs to uid " + std::to_string(st.st_uid) +
           ", not to this user (uid " + std::to_string(me) +
           "): its owner could replace what is written there";
  if ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX))
    return "every user may write in it (mode " +
           octal_mode(st.st_mode & 07777) +
           ", world-writable without the sticky bit): anyone could replace "
           "what is written there";
  return std::nullopt;
}

std::optional<unsigned> tighten_to_private(const fs::path& path) {
  // O_NOFOLLOW: a link is not ours to change, nor what it points to.
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return std::nullopt;
  struct stat st {};
  std::optional<unsigned> before;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
      st.st_uid == ::geteuid() && (st.st_mode & 077) != 0 &&
      ::fchmod(fd, private_file_mode) == 0)
    before = st.st_mode & 07777;
  ::close(fd);
  return before;
}

std::string octal_mode(unsigned mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", mode & 07777);
  return text;
}

} // namespace outbox::storage
