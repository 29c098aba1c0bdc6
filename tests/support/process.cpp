#include "support/process.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>

namespace outbox::test {

namespace {

void drain(int fd, std::string& into, bool& open) {
  char buffer[4096];
  auto n = ::read(fd, buffer, sizeof buffer);
  if (n > 0)
    into.append(buffer, static_cast<size_t>(n));
  else
    open = false;
}

} // namespace

process_result run_process(const std::vector<std::string>& argv,
                           const std::string& cwd, int timeout_ms) {
  // argv pointers are built before fork: nothing allocates in the child.
  std::vector<char*> args;
  for (const auto& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int out_pipe[2];
  int err_pipe[2];
  if (::pipe(out_pipe) != 0 || ::pipe(err_pipe) != 0)
    throw std::runtime_error("pipe failed");
  pid_t pid = ::fork();
  if (pid < 0)
    throw std::runtime_error("fork failed");
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    ::dup2(out_pipe[1], STDOUT_FILENO);
    ::dup2(err_pipe[1], STDERR_FILENO);
    ::close(out_pipe[0]);
    ::close(err_pipe[0]);
    if (!cwd.empty() && ::chdir(cwd.c_str()) != 0)
      ::_exit(126);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  process_result result;
  bool out_open = true;
  bool err_open = true;
  auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  bool killed = false;
  while (out_open || err_open) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0 && !killed) {
      ::kill(pid, SIGKILL);
      killed = true;
    }
    pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
    ::poll(fds, 2, left > 0 ? static_cast<int>(left) : 100);
    if (out_open && (fds[0].revents & (POLLIN | POLLHUP)))
      drain(out_pipe[0], result.out, out_open);
    if (err_open && (fds[1].revents & (POLLIN | POLLHUP)))
      drain(err_pipe[0], result.err, err_open);
  }
  ::close(out_pipe[0]);
  ::close(err_pipe[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (WIFEXITED(status))
    result.exit_code = WEXITSTATUS(status);
  else if (WIFSIGNALED(status))
    result.signal = WTERMSIG(status);
  return result;
}

process_result run_outbox(const std::vector<std::string>& args,
                          const std::string& cwd, int timeout_ms) {
  std::vector<std::string> argv{OUTBOX_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_process(argv, cwd, timeout_ms);
}

} // namespace outbox::test
