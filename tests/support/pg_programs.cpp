#include "support/pg_programs.hpp"

#include "support/process.hpp"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace outbox::test::pg {

namespace {

server_account look_up_server_user() {
  server_account who;
  who.uid = ::geteuid();
  who.gid = ::getegid();
  if (who.uid != 0)
    return who;
  passwd entry{};
  passwd* found = nullptr;
  std::vector<char> buffer(16384);
  if (::getpwnam_r("postgres", &entry, buffer.data(), buffer.size(), &found) !=
          0 ||
      found == nullptr)
    throw std::runtime_error(
        "running as root, and there is no user postgres to run PostgreSQL "
        "as (Debian's postgresql-common creates it)");
  who.switch_user = true;
  who.uid = entry.pw_uid;
  who.gid = entry.pw_gid;
  int count = 16;
  who.groups.resize(static_cast<size_t>(count));
  while (::getgrouplist("postgres", entry.pw_gid, who.groups.data(), &count) <
         0)
    who.groups.resize(static_cast<size_t>(count));
  who.groups.resize(static_cast<size_t>(count));
  return who;
}

std::runtime_error system_error(const std::string& what) {
  return std::runtime_error(what + ": " + std::strerror(errno));
}

/// In the child after fork(): system calls only, no allocation.
[[noreturn]] void exec_child(char* const* argv, const server_account& who,
                             int log_fd, pid_t parent,
                             const std::string& stdin_text) {
  if (who.switch_user &&
      (::setgroups(who.groups.size(), who.groups.data()) != 0 ||
       ::setgid(who.gid) != 0 || ::setuid(who.uid) != 0))
    ::_exit(126);
  // After the switch, which would clear it.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) // the parent died before prctl
    ::_exit(1);
  int input[2];
  if (::pipe(input) != 0)
    ::_exit(125);
  // A pipe holds 64 KiB: a password or a statement never blocks here.
  if (!stdin_text.empty() &&
      ::write(input[1], stdin_text.data(), stdin_text.size()) !=
          static_cast<ssize_t>(stdin_text.size()))
    ::_exit(125);
  ::close(input[1]);
  ::dup2(input[0], STDIN_FILENO);
  ::dup2(log_fd, STDOUT_FILENO);
  ::dup2(log_fd, STDERR_FILENO);
  // Not the test's sockets and pipes: a server holding one open would
  // keep a reader from ever seeing its end.
  if (::syscall(SYS_close_range, 3U, ~0U, 0U) != 0)
    for (int fd = 3; fd < 1024; ++fd)
      ::close(fd);
  ::execv(argv[0], argv);
  ::_exit(127);
}

} // namespace

const server_account& server_user() {
  static const server_account who = look_up_server_user();
  return who;
}

pid_t spawn(const std::vector<std::string>& args, const std::string& log,
            const std::string& stdin_text) {
  const auto& who = server_user();
  int log_fd =
      ::open(log.c_str(),
             O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (log_fd < 0)
    throw system_error("cannot open " + log);
  std::vector<std::string> copy = args;
  auto argv = exec_argv(copy);
  auto parent = ::getpid();
  pid_t child = ::fork();
  if (child < 0) {
    ::close(log_fd);
    throw system_error("fork");
  }
  if (child == 0)
    exec_child(argv.data(), who, log_fd, parent, stdin_text);
  ::close(log_fd);
  return child;
}

void run(const std::vector<std::string>& args, const std::string& log,
         const std::string& what, int deadline_ms,
         const std::string& stdin_text) {
  pid_t child = spawn(args, log, stdin_text);
  int status = 0;
  auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(deadline_ms);
  while (::waitpid(child, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(child, SIGKILL);
      ::waitpid(child, &status, 0);
      throw std::runtime_error(what + " did not finish within " +
                               std::to_string(deadline_ms / 1000) +
                               " s: " + log_tail(log));
    }
    // Polling a child with a deadline, not a sleep to synchronize.
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error(what + " failed: " + log_tail(log));
}

void write_new_file(const std::string& path, const std::string& text,
                    mode_t mode, bool server_group) {
  int fd = ::open(path.c_str(),
                  O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    throw system_error("cannot create " + path);
  bool ok = ::write(fd, text.data(), text.size()) ==
            static_cast<ssize_t>(text.size());
  if (ok && server_group && server_user().switch_user)
    ok = ::fchown(fd, static_cast<uid_t>(-1), server_user().gid) == 0;
  ok = ok && ::fchmod(fd, mode) == 0;
  ::close(fd);
  if (!ok)
    throw system_error("cannot write " + path);
}

void let_server_through(const std::string& path) {
  const auto& who = server_user();
  if (who.switch_user &&
      ::chown(path.c_str(), static_cast<uid_t>(-1), who.gid) != 0)
    throw system_error("cannot give " + path + " the group of postgres");
  if (::chmod(path.c_str(), who.switch_user ? 0710 : 0700) != 0)
    throw system_error("cannot chmod " + path);
}

void make_server_folder(const std::string& path) {
  const auto& who = server_user();
  if (::mkdir(path.c_str(), 0700) != 0)
    throw system_error("cannot create " + path);
  // Still empty, in a folder only we can write: nothing to redirect.
  if (who.switch_user && ::chown(path.c_str(), who.uid, who.gid) != 0)
    throw system_error("cannot give " + path + " to postgres");
}

void remove_server_folder(const std::string& path) {
  if (!server_user().switch_user) {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
    return;
  }
  // Its content as postgres (find -delete follows no link), then the
  // folder itself, which sits in a folder of ours.
  run({"/usr/bin/find", path, "-mindepth", "1", "-delete"}, "/dev/null",
      "emptying " + path, 60'000);
  if (::rmdir(path.c_str()) != 0 && errno != ENOENT)
    throw system_error("cannot remove " + path);
}

std::vector<std::pair<int, long>> segments_created_by(pid_t postmaster) {
  std::vector<std::pair<int, long>> found;
  std::ifstream table{"/proc/sysvipc/shm"};
  std::string line;
  std::getline(table, line); // the header
  while (std::getline(table, line)) {
    std::istringstream fields{line};
    long key = 0, id = 0, perms = 0, size = 0, creator = 0, last = 0;
    long attached = 0, uid = 0, gid = 0, creator_uid = 0;
    if (fields >> key >> id >> perms >> size >> creator >> last >> attached >>
            uid >> gid >> creator_uid &&
        creator == postmaster &&
        creator_uid == static_cast<long>(server_user().uid))
      found.emplace_back(static_cast<int>(id), attached);
  }
  return found;
}

std::string random_password() {
  unsigned char bytes[16];
  std::ifstream random{"/dev/urandom", std::ios::binary};
  if (!random.read(reinterpret_cast<char*>(bytes), sizeof bytes))
    throw std::runtime_error("cannot read /dev/urandom");
  static constexpr char digits[] = "0123456789abcdef";
  std::string text;
  for (auto byte : bytes) {
    text += digits[byte >> 4];
    text += digits[byte & 15];
  }
  return text;
}

std::string uri_escape(const std::string& text) {
  static constexpr char digits[] = "0123456789ABCDEF";
  std::string escaped;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' ||
        c == '/') {
      escaped += static_cast<char>(c);
    } else {
      escaped += '%';
      escaped += digits[c >> 4];
      escaped += digits[c & 15];
    }
  }
  return escaped;
}

} // namespace outbox::test::pg
