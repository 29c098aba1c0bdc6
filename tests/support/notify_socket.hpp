#pragma once

// A service manager's notification socket, as systemd opens one for a
// Type=notify service: a unix datagram socket the test binds in its own
// directory and names in NOTIFY_SOCKET for the processes it starts.

#include <chrono>
#include <optional>
#include <string>

namespace outbox::test {

class notify_socket {
public:
  /// Binds `path`; throws std::runtime_error when it cannot.
  explicit notify_socket(std::string path);
  ~notify_socket();
  notify_socket(const notify_socket&) = delete;
  notify_socket& operator=(const notify_socket&) = delete;

  const std::string& path() const { return path_; }

  /// The next datagram, or nothing within `timeout`.
  std::optional<std::string> next(std::chrono::milliseconds timeout);

  /// Reads datagrams until one equals `message` (true) or `timeout` passes.
  bool wait_for(const std::string& message, std::chrono::milliseconds timeout);

private:
  std::string path_;
  int fd_ = -1;
};

} // namespace outbox::test
