#include "support/tmux_pane.hpp"

#include <signal.h>

#include <chrono>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace outbox::test {

namespace {

std::string shell_quoted(const std::string& word) {
  std::string out = "'";
  for (char c : word)
    out += c == '\'' ? std::string{"'\\''"} : std::string(1, c);
  return out + "'";
}

} // namespace

tmux_pane::tmux_pane(const std::string& socket, int columns, int rows,
                     const std::vector<std::string>& argv)
    : socket_(socket) {
  std::string command;
  for (const auto& word : argv)
    command += shell_quoted(word) + " ";
  // The pane stays open on `read` so the screen can be captured, and
  // tells the test it is done through a tmux channel (an event, not a
  // sleep).
  command += "; echo exit=$?; " + tmux_command() + " wait-for -S done; read x";
  auto started = tmux({"new-session", "-d", "-x", std::to_string(columns), "-y",
                       std::to_string(rows), "sh -c " + shell_quoted(command)});
  if (started.exit_code != 0)
    throw std::runtime_error("tmux new-session: " + started.err);
  auto pid = tmux({"display-message", "-p", "#{pid}"});
  server_pid_ = std::stoi(pid.out);
}

tmux_pane::~tmux_pane() {
  tmux({"kill-server"});
  // Not our child (tmux daemonises): wait for the pid to go, bounded,
  // then SIGKILL that pid.
  for (int i = 0; i < 100 && ::kill(server_pid_, 0) == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  if (::kill(server_pid_, 0) == 0)
    ::kill(server_pid_, SIGKILL);
}

bool tmux_pane::wait_done(int timeout_ms) {
  return tmux({"wait-for", "done"}, timeout_ms).exit_code == 0;
}

std::vector<std::string> tmux_pane::screen() {
  std::istringstream text{tmux({"capture-pane", "-p"}).out};
  std::vector<std::string> rows;
  for (std::string row; std::getline(text, row);)
    rows.push_back(row);
  return rows;
}

std::string tmux_pane::tmux_command() const {
  return "/usr/bin/tmux -S " + shell_quoted(socket_);
}

process_result tmux_pane::tmux(std::vector<std::string> args, int timeout_ms) {
  std::vector<std::string> argv{"/usr/bin/tmux", "-S", socket_, "-f",
                                "/dev/null"};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_process(argv, "", timeout_ms);
}

} // namespace outbox::test
