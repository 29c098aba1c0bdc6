#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

namespace outbox::test {

/// What a finished child process left behind.
struct process_result {
  int exit_code = -1; // -1 when killed by a signal (see signal)
  int signal = 0;
  std::string out;
  std::string err;
  /// The child's peak resident set (ru_maxrss of wait4), in KiB.
  long peak_rss_kb = 0;
};

/// A child process started now, with stdout and stderr captured in files
/// (so it never blocks on a full pipe). Killed with SIGKILL if it dies with
/// the test process (PR_SET_PDEATHSIG), and reaped by pid in the destructor
/// if the test did not wait for it.
class child_process {
public:
  explicit child_process(const std::vector<std::string>& argv,
                         const std::string& cwd = "");
  ~child_process();
  child_process(const child_process&) = delete;
  child_process& operator=(const child_process&) = delete;

  pid_t pid() const { return pid_; }

  /// Sends a signal (SIGTERM, SIGKILL, SIGSTOP...) to the child.
  void signal(int sig);

  /// Waits (bounded) until the child's stderr contains `text`, e.g. a
  /// readiness line. Returns false on timeout or if the child exited.
  bool wait_for_stderr(const std::string& text, int timeout_ms);

  /// Waits until the child exits, killing it (SIGKILL) if it outlives
  /// `timeout_ms`; then returns its exit status and output.
  process_result wait(int timeout_ms);

  /// Waits up to `timeout_ms` for the child to exit on its own, never
  /// killing it. True once it has exited (it is then reaped and wait()
  /// returns its result at once); false if it is still running.
  bool exited_within(int timeout_ms);

  /// True once wait() has reaped the child.
  bool finished() const { return pid_ <= 0; }

private:
  pid_t pid_ = -1;
  std::string out_path_;
  std::string err_path_;
  process_result result_;
};

/// The pid of a child that has exited and been reaped: no process has it
/// (until the system reuses it, far beyond a test).
pid_t gone_pid();

/// Runs `argv` to completion with its output captured, in `cwd` when given.
process_result run_process(const std::vector<std::string>& argv,
                           const std::string& cwd = "",
                           int timeout_ms = 60'000);

/// `args` as execv wants them: pointers into `args`, then a null. Built
/// before fork(), since the child may not allocate.
std::vector<char*> exec_argv(std::vector<std::string>& args);

/// Waits for a server we just forked: polls `ready` every 10 ms until it
/// holds (true), or our child `pid` exits (false, `pid` reaped and set to
/// -1: most likely its port was taken), or `timeout_ms` pass (false, `pid`
/// left as it is: still running).
bool wait_for_server(pid_t& pid, int timeout_ms,
                     const std::function<bool()>& ready);

/// The last 2000 characters of a log file (all of it when shorter).
std::string log_tail(const std::string& path);

/// Starts a stopped server of ours again: `launch` forks it and waits for
/// it (false: it exited at once). Throws std::runtime_error "`server` did
/// not restart on port `port`: " and the end of its `log` when it did not.
void launch_again(const std::function<bool()>& launch,
                  const std::string& server, int port, const std::string& log);

/// Sends `signal` to our child `pid` and reaps it, with SIGKILL if it
/// outlives `wait_ms`.
void signal_and_reap(pid_t pid, int signal, int wait_ms);

/// The outbox binary under test followed by `args`.
std::vector<std::string> outbox_argv(const std::vector<std::string>& args);

/// Runs the outbox binary under test with these arguments.
process_result run_outbox(const std::vector<std::string>& args,
                          const std::string& cwd = "", int timeout_ms = 60'000);

} // namespace outbox::test
