#include "support/notify_socket.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <stdexcept>

namespace outbox::test {

notify_socket::notify_socket(std::string path) : path_(std::move(path)) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path_.size() >= sizeof address.sun_path)
    throw std::runtime_error("notify socket path too long: " + path_);
  std::memcpy(address.sun_path, path_.c_str(), path_.size() + 1);
  fd_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0 ||
      ::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0)
    throw std::runtime_error("cannot bind a notify socket at " + path_ + ": " +
                             std::strerror(errno));
}

notify_socket::~notify_socket() {
  if (fd_ >= 0)
    ::close(fd_);
  ::unlink(path_.c_str());
}

std::optional<std::string>
notify_socket::next(std::chrono::milliseconds timeout) {
  pollfd waiting{fd_, POLLIN, 0};
  if (::poll(&waiting, 1, static_cast<int>(timeout.count())) <= 0)
    return std::nullopt;
  char buffer[4096];
  auto n = ::recv(fd_, buffer, sizeof buffer, 0);
  if (n < 0)
    return std::nullopt;
  return std::string(buffer, static_cast<std::size_t>(n));
}

bool notify_socket::wait_for(const std::string& message,
                             std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0)
      return false;
    auto got = next(left);
    if (got && *got == message)
      return true;
  }
}

} // namespace outbox::test
