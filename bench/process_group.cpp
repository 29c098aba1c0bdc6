#include "bench/process_group.hpp"

#include "bench/interrupt_cleanup.hpp"
#include "bench/process_cpu.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace outbox::bench {

namespace {

/// This process's environment without the variables that would take the
/// Redis address or password away from the child's config file.
std::vector<char*> child_environment() {
  std::vector<char*> env;
  for (char** e = environ; *e != nullptr; ++e)
    if (std::strncmp(*e, "OUTBOX_REDIS=", 13) != 0 &&
        std::strncmp(*e, "OUTBOX_REDIS_PASSWORD=", 22) != 0)
      env.push_back(*e);
  env.push_back(nullptr);
  return env;
}

/// What a process that exited said: its last line naming outbox (the
/// error, after "running;") and the end of its log.
std::string what_it_said(const std::string& log_path) {
  std::ifstream in{log_path};
  std::stringstream whole;
  whole << in.rdbuf();
  auto log = whole.str();
  std::string first;
  std::istringstream lines{log};
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("outbox", 0) == 0)
      first = line;
  if (log.size() > 400)
    log = "..." + log.substr(log.size() - 400);
  return first.empty() || log.find(first) != std::string::npos
             ? log
             : first + " ... " + log;
}

} // namespace

process_group::process_group(const std::string& program,
                             const std::vector<std::vector<std::string>>& args,
                             const std::string& folder,
                             const std::string& name) {
  auto env = child_environment();
  try {
    for (std::size_t i = 0; i < args.size(); ++i) {
      auto log = (std::filesystem::path{folder} /
                  (name + "-" + std::to_string(i) + ".log"))
                     .string();
      std::vector<std::string> argv_text{program};
      argv_text.insert(argv_text.end(), args[i].begin(), args[i].end());
      std::vector<char*> argv;
      for (auto& a : argv_text)
        argv.push_back(a.data());
      argv.push_back(nullptr);
      posix_spawn_file_actions_t files;
      posix_spawn_file_actions_init(&files);
      posix_spawn_file_actions_addopen(&files, STDIN_FILENO, "/dev/null",
                                       O_RDONLY, 0);
      posix_spawn_file_actions_addopen(&files, STDOUT_FILENO, "/dev/null",
                                       O_WRONLY, 0);
      posix_spawn_file_actions_addopen(&files, STDERR_FILENO, log.c_str(),
                                       O_WRONLY | O_CREAT | O_TRUNC, 0600);
      pid_t pid = 0;
      int failed = ::posix_spawn(&pid, program.c_str(), &files, nullptr,
                                 argv.data(), env.data());
      posix_spawn_file_actions_destroy(&files);
      if (failed != 0)
        throw std::runtime_error("cannot start " + program + ": " +
                                 std::strerror(failed));
      pids_.push_back(pid);
      logs_.push_back(log);
      running_.push_back(true);
    }
  } catch (...) {
    stop_all();
    throw;
  }
  // A stop signal ends them at once, before the database they use goes.
  register_cleanup(this, [pids = pids_] {
    for (auto pid : pids)
      ::kill(pid, SIGKILL);
    for (auto pid : pids)
      ::waitpid(pid, nullptr, 0);
  });
}

process_group::~process_group() {
  forget_cleanup(this);
  stop_all();
}

void process_group::stop_all() {
  using clock = std::chrono::steady_clock;
  for (std::size_t i = 0; i < pids_.size(); ++i)
    if (running_[i])
      ::kill(pids_[i], SIGTERM);
  auto deadline = clock::now() + std::chrono::seconds(30);
  for (std::size_t i = 0; i < pids_.size(); ++i) {
    while (running_[i] && ::waitpid(pids_[i], nullptr, WNOHANG) == 0) {
      if (clock::now() > deadline) {
        ::kill(pids_[i], SIGKILL);
        ::waitpid(pids_[i], nullptr, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    running_[i] = false;
  }
}

void process_group::check_running() {
  for (std::size_t i = 0; i < pids_.size(); ++i) {
    int status = 0;
    if (!running_[i])
      continue;
    pid_t reaped = 0;
    do
      reaped = ::waitpid(pids_[i], &status, WNOHANG);
    while (reaped < 0 && errno == EINTR);
    if (reaped != pids_[i])
      continue;
    running_[i] = false;
    auto code =
        WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    throw std::runtime_error("process " + std::to_string(i + 1) + " of " +
                             std::to_string(pids_.size()) + " exited (" +
                             std::to_string(code) +
                             "): " + what_it_said(logs_[i]));
  }
}

std::vector<double> process_group::cpu_seconds() const {
  std::vector<double> seconds;
  for (std::size_t i = 0; i < pids_.size(); ++i)
    seconds.push_back(running_[i] ? process_cpu_seconds(pids_[i]).value_or(0)
                                  : 0);
  return seconds;
}

} // namespace outbox::bench
