#pragma once

// A terminal for tests of what a user's screen shows: a tmux pane of a
// given size running one command (tmux is in Debian).

#include "support/process.hpp"

#include <string>
#include <vector>

namespace outbox::test {

/// A tmux server of its own (socket in a temp dir, no user config) running
/// one command in a pane of the given size. Killed, and its pid reaped or
/// waited for, when the object goes.
class tmux_pane {
public:
  tmux_pane(const std::string& socket, int columns, int rows,
            const std::vector<std::string>& argv);
  ~tmux_pane();
  tmux_pane(const tmux_pane&) = delete;
  tmux_pane& operator=(const tmux_pane&) = delete;

  /// Blocks until the command has ended (bounded by `timeout_ms`).
  bool wait_done(int timeout_ms);

  /// The rows of the visible screen.
  std::vector<std::string> screen();

private:
  std::string tmux_command() const;
  process_result tmux(std::vector<std::string> args, int timeout_ms = 20'000);

  std::string socket_;
  int server_pid_ = 0;
};

} // namespace outbox::test
