#include "cli/service_notify.hpp"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

namespace outbox::cli {

bool notify_service_manager(const std::string& state) {
  const char* path = std::getenv("NOTIFY_SOCKET");
  if (path == nullptr || path[0] == '\0')
    return false;
  std::string where{path};
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  // "@name" is an abstract socket: a leading NUL instead of the '@'.
  if (where.size() >= sizeof address.sun_path ||
      (where[0] != '/' && where[0] != '@'))
    return false;
  std::memcpy(address.sun_path, where.data(), where.size());
  if (where[0] == '@')
    address.sun_path[0] = '\0';
  auto length =
      static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + where.size());
  int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return false;
  auto sent = ::sendto(fd, state.data(), state.size(), MSG_NOSIGNAL,
                       reinterpret_cast<const sockaddr*>(&address), length);
  ::close(fd);
  return sent == static_cast<ssize_t>(state.size());
}

std::optional<std::chrono::milliseconds> watchdog_interval() {
  const char* usec = std::getenv("WATCHDOG_USEC");
  if (usec == nullptr)
    return std::nullopt;
  // Meant for the main process only: a child started with our environment
  // must not think it is watched.
  if (const char* pid = std::getenv("WATCHDOG_PID");
      pid != nullptr && std::strtoll(pid, nullptr, 10) != ::getpid())
    return std::nullopt;
  char* end = nullptr;
  auto micros = std::strtoll(usec, &end, 10);
  if (end == usec || *end != '\0' || micros <= 0)
    return std::nullopt;
  return std::chrono::milliseconds(micros / 1000 > 0 ? micros / 1000 : 1);
}

} // namespace outbox::cli
