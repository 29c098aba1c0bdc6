#pragma once

#include <string>
#include <vector>

namespace outbox::test {

/// What a finished child process left behind.
struct process_result {
  int exit_code = -1; // -1 when killed by a signal (see signal)
  int signal = 0;
  std::string out;
  std::string err;
};

/// Runs `argv` to completion with stdout and stderr captured, in `cwd` when
/// given. Killed (SIGKILL) and reaped if it outlives `timeout_ms`; the
/// result then has signal == SIGKILL.
process_result run_process(const std::vector<std::string>& argv,
                           const std::string& cwd = "",
                           int timeout_ms = 60'000);

/// Runs the outbox binary under test with these arguments.
process_result run_outbox(const std::vector<std::string>& args,
                          const std::string& cwd = "", int timeout_ms = 60'000);

} // namespace outbox::test
