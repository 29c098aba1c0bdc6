#pragma once

// Processes a stage starts (the outbox program itself), each with its
// stderr in a log file of the bench's folder: stopped with SIGTERM, then
// SIGKILL after 30 s, and reaped by pid when the group goes out of scope,
// also when the stage throws.

#include <sys/types.h>

#include <string>
#include <vector>

namespace outbox::bench {

class process_group {
public:
  /// Starts one process per entry of `args` (argv without argv[0]) of
  /// `program`, stdout to /dev/null, stderr to `<folder>/<name>-<i>.log`,
  /// the environment without $OUTBOX_REDIS and $OUTBOX_REDIS_PASSWORD (the
  /// config file says which Redis). Throws std::runtime_error, after
  /// stopping those already started, when one cannot start.
  process_group(const std::string& program,
                const std::vector<std::vector<std::string>>& args,
                const std::string& folder, const std::string& name);
  ~process_group();
  process_group(const process_group&) = delete;
  process_group& operator=(const process_group&) = delete;

  /// Throws std::runtime_error, with the exit code and what the process
  /// said (its first error line and the end of its log), when one exited.
  void check_running();

  /// User + system CPU seconds of each process so far, in start order.
  std::vector<double> cpu_seconds() const;

  /// How many started.
  std::size_t size() const { return pids_.size(); }
  /// The process id of the `i`th, in start order.
  pid_t pid(std::size_t i) const { return pids_.at(i); }

private:
  void stop_all();

  std::vector<pid_t> pids_;
  std::vector<std::string> logs_;
  /// False once reaped (check_running found it exited).
  std::vector<bool> running_;
};

} // namespace outbox::bench
