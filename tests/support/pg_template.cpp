#include "support/pg_template.hpp"

#include "support/pg_programs.hpp"
#include "support/process.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <vector>

namespace outbox::test::pg {

namespace {

namespace fs = std::filesystem;

constexpr int initdb_deadline_ms = 120'000;

/// initdb's arguments but its folder: part of the template's key.
const std::vector<std::string>& initdb_settings() {
  static const std::vector<std::string> settings = {
      "-U",
      "outbox",
      "--auth=scram-sha-256",
      "-E",
      "UTF8",
      "--no-locale",
      "--no-sync", // a test's cluster need not survive a power loss
      "--pwfile=/dev/stdin"};
  return settings;
}

/// FNV-1a, 64 bits, in hexadecimal: stable across builds and processes.
std::string fnv1a(const std::string& text) {
  std::uint64_t hash = 14695981039346656037ULL;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ULL;
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx",
                static_cast<unsigned long long>(hash));
  return hex;
}

/// Names what makes two templates differ: the PostgreSQL build (a package
/// upgrade changes the binary), initdb's settings, the server's user.
std::string template_key() {
  auto postgres = std::string(bin_dir) + "/postgres";
  struct stat binary {};
  if (::stat(postgres.c_str(), &binary) != 0)
    throw std::runtime_error(postgres +
                             " not found (Debian package postgresql-15)");
  std::string text = "outbox pg template 1\n" + postgres + " " +
                     std::to_string(binary.st_size) + " " +
                     std::to_string(binary.st_mtim.tv_sec) + "." +
                     std::to_string(binary.st_mtim.tv_nsec) + "\n";
  for (const auto& setting : initdb_settings())
    text += setting + "\n";
  text += "server uid " + std::to_string(server_user().uid) + "\n";
  return fnv1a(text);
}

/// $TMPDIR (or /tmp)/outbox-pg-templates-UID, a folder of ours that no
/// one else may write (it is shared with no other user: a name another
/// user made first is refused, not used).
std::string templates_folder() {
  std::string base = "/tmp";
  if (const char* tmpdir = std::getenv("TMPDIR"); tmpdir && *tmpdir)
    base = tmpdir;
  auto folder = base + "/outbox-pg-templates-" + std::to_string(::geteuid());
  if (::mkdir(folder.c_str(), 0700) != 0 && errno != EEXIST)
    throw std::runtime_error("cannot create " + folder + ": " +
                             std::strerror(errno));
  struct stat info {};
  if (::lstat(folder.c_str(), &info) != 0 || !S_ISDIR(info.st_mode) ||
      info.st_uid != ::geteuid() || (info.st_mode & 022) != 0)
    throw std::runtime_error(folder +
                             " is not a folder of ours that only we may "
                             "write: remove it");
  let_server_through(folder);
  return folder;
}

/// An exclusive lock on `path` for as long as it lives.
class file_lock {
public:
  explicit file_lock(const std::string& path)
      : fd_(::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
                   0600)) {
    if (fd_ < 0 || ::flock(fd_, LOCK_EX) != 0)
      throw std::runtime_error("cannot lock " + path + ": " +
                               std::strerror(errno));
  }
  ~file_lock() { ::close(fd_); }
  file_lock(const file_lock&) = delete;
  file_lock& operator=(const file_lock&) = delete;

private:
  int fd_;
};

/// Removes a template folder: the cluster as its user, the rest as us.
void remove_template(const fs::path& folder) {
  if (fs::exists(folder / "data"))
    remove_server_folder((folder / "data").string());
  fs::remove_all(folder);
}

/// Makes the template in a fresh folder of `folder` and renames it to
/// `key` once complete, so a template found under its key is whole.
void make_template(const std::string& folder, const std::string& key) {
  auto pattern = folder + "/" + key + ".new-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr)
    throw std::runtime_error("mkdtemp " + pattern + ": " +
                             std::strerror(errno));
  fs::path made = pattern;
  try {
    let_server_through(made.string());
    auto data = (made / "data").string();
    make_server_folder(data);
    auto password = random_password();
    std::vector<std::string> initdb = {std::string(bin_dir) + "/initdb", "-D",
                                       data};
    initdb.insert(initdb.end(), initdb_settings().begin(),
                  initdb_settings().end());
    run(initdb, (made / "initdb.log").string(), "initdb", initdb_deadline_ms,
        password + "\n");
    // Single-user mode: no port to find, nothing listening meanwhile; it
    // reports an error in its output, not in its exit status.
    auto single_log = (made / "create_database.log").string();
    run({std::string(bin_dir) + "/postgres", "--single", "-D", data, "-c",
         "fsync=off", "postgres"},
        single_log, "CREATE DATABASE outbox", initdb_deadline_ms,
        "CREATE DATABASE outbox;\n");
    if (log_tail(single_log).find("ERROR:") != std::string::npos)
      throw std::runtime_error("CREATE DATABASE outbox failed: " +
                               log_tail(single_log));
    write_new_file((made / "password").string(), password, 0600);
    fs::rename(made, fs::path(folder) / key);
  } catch (...) {
    try {
      remove_template(made);
    } catch (...) {
      // The first failure is the one to report; the next maker removes
      // what is left (it holds the lock).
    }
    throw;
  }
}

cluster_template load_template(const fs::path& folder) {
  std::ifstream in{folder / "password"};
  cluster_template found;
  found.data_dir = (folder / "data").string();
  if (!(in >> found.password))
    throw std::runtime_error("no password in " +
                             (folder / "password").string());
  return found;
}

cluster_template find_or_make_template() {
  auto folder = templates_folder();
  auto key = template_key();
  file_lock lock{folder + "/" + key + ".lock"};
  fs::path ready = fs::path(folder) / key;
  if (!fs::exists(ready / "password")) {
    // Left by a process that died making it: we hold the lock now.
    for (const auto& entry : fs::directory_iterator{folder})
      if (entry.path().filename().string().rfind(key + ".new-", 0) == 0)
        remove_template(entry.path());
    make_template(folder, key);
  }
  return load_template(ready);
}

} // namespace

const cluster_template& shared_template() {
  static std::mutex mutex;
  static std::unique_ptr<cluster_template> made;
  std::lock_guard<std::mutex> guard{mutex};
  if (!made) // not cached after a failure: the next fixture tries again
    made = std::make_unique<cluster_template>(find_or_make_template());
  return *made;
}

} // namespace outbox::test::pg
