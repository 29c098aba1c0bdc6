#include "support/process.hpp"
#include "support/build_paths.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace outbox::test {

namespace {

std::string make_capture_file(const char* tag) {
  std::string pattern = std::string{"/tmp/outbox-child-"} + tag + "-XXXXXX";
  int fd = ::mkstemp(pattern.data());
  if (fd < 0)
    throw std::runtime_error("mkstemp failed");
  ::close(fd);
  return pattern;
}

std::string slurp(const std::string& path) {
  std::ifstream in{path};
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

} // namespace

child_process::child_process(const std::vector<std::string>& argv,
                             const std::string& cwd)
    : out_path_(make_capture_file("out")), err_path_(make_capture_file("err")) {
  // Everything the child touches is built before fork().
  std::vector<char*> args;
  for (const auto& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int out_fd = ::open(out_path_.c_str(), O_WRONLY | O_TRUNC);
  int err_fd = ::open(err_path_.c_str(), O_WRONLY | O_TRUNC);
  pid_ = ::fork();
  if (pid_ < 0)
    throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    ::dup2(out_fd, STDOUT_FILENO);
    ::dup2(err_fd, STDERR_FILENO);
    if (!cwd.empty() && ::chdir(cwd.c_str()) != 0)
      ::_exit(126);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(out_fd);
  ::close(err_fd);
}

child_process::~child_process() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  ::unlink(out_path_.c_str());
  ::unlink(err_path_.c_str());
}

void child_process::signal(int sig) {
  if (pid_ > 0)
    ::kill(pid_, sig);
}

bool child_process::wait_for_stderr(const std::string& text, int timeout_ms) {
  auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    if (slurp(err_path_).find(text) != std::string::npos)
      return true;
    // The file only grows; a short pause between reads bounds the cost.
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return slurp(err_path_).find(text) != std::string::npos;
}

bool child_process::exited_within(int timeout_ms) {
  if (pid_ <= 0)
    return true;
  int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0));
  if (pidfd < 0)
    return false;
  pollfd exited{pidfd, POLLIN, 0};
  bool gone = ::poll(&exited, 1, timeout_ms) > 0;
  ::close(pidfd);
  if (gone)
    wait(0);
  return gone;
}

process_result child_process::wait(int timeout_ms) {
  if (pid_ <= 0)
    return result_;
  // A pidfd becomes readable when the child exits: wait on that event with
  // the timeout, then reap.
  int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0));
  if (pidfd >= 0) {
    pollfd exited{pidfd, POLLIN, 0};
    if (::poll(&exited, 1, timeout_ms) == 0)
      ::kill(pid_, SIGKILL);
    ::close(pidfd);
  }
  int status = 0;
  rusage usage{};
  ::wait4(pid_, &status, 0, &usage);
  pid_ = -1;
  result_.peak_rss_kb = usage.ru_maxrss;
  if (WIFEXITED(status))
    result_.exit_code = WEXITSTATUS(status);
  else if (WIFSIGNALED(status))
    result_.signal = WTERMSIG(status);
  result_.out = slurp(out_path_);
  result_.err = slurp(err_path_);
  return result_;
}

pid_t gone_pid() {
  pid_t child = ::fork();
  if (child == 0)
    ::_exit(0);
  ::waitpid(child, nullptr, 0);
  return child;
}

process_result run_process(const std::vector<std::string>& argv,
                           const std::string& cwd, int timeout_ms) {
  child_process child{argv, cwd};
  return child.wait(timeout_ms);
}

std::vector<std::string> outbox_argv(const std::vector<std::string>& args) {
  std::vector<std::string> argv{outbox_binary()};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

process_result run_outbox(const std::vector<std::string>& args,
                          const std::string& cwd, int timeout_ms) {
  return run_process(outbox_argv(args), cwd, timeout_ms);
}

std::vector<char*> exec_argv(std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (auto& arg : args)
    argv.push_back(arg.data());
  argv.push_back(nullptr);
  return argv;
}

bool wait_for_server(pid_t& pid, int timeout_ms,
                     const std::function<bool()>& ready) {
  auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    if (::waitpid(pid, nullptr, WNOHANG) == pid) {
      pid = -1;
      return false;
    }
    if (ready())
      return true;
    // Polling for an event with a deadline, not a sleep to synchronize.
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

std::string log_tail(const std::string& path) {
  auto all = slurp(path);
  return all.size() > 2000 ? all.substr(all.size() - 2000) : all;
}

void launch_again(const std::function<bool()>& launch,
                  const std::string& server, int port, const std::string& log) {
  if (!launch())
    throw std::runtime_error(server + " did not restart on port " +
                             std::to_string(port) + ": " + log_tail(log));
}

void signal_and_reap(pid_t pid, int signal, int wait_ms) {
  ::kill(pid, signal);
  auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(wait_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    if (::waitpid(pid, nullptr, WNOHANG) == pid)
      return;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
}

} // namespace outbox::test
