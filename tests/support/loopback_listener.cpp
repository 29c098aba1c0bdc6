#include "support/loopback_listener.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>

namespace outbox::test {

loopback_listener listen_on_loopback() {
  loopback_listener l;
  l.fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (l.fd < 0 ||
      ::bind(l.fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(l.fd, 16) != 0 ||
      ::getsockname(l.fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    if (l.fd >= 0)
      ::close(l.fd);
    throw std::runtime_error("cannot listen on loopback");
  }
  l.port = ntohs(addr.sin_port);
  return l;
}

loopback_server::loopback_server(reply_function reply)
    : reply_(std::move(reply)), listener_(listen_on_loopback()),
      thread_([this] { serve(); }) {}

loopback_server::~loopback_server() {
  done_ = true;
  thread_.join();
  for (int fd : clients_)
    ::close(fd);
  ::close(listener_.fd);
}

void loopback_server::serve() {
  // Polled in short rounds, so the destructor's stop is seen soon.
  while (!done_) {
    std::vector<pollfd> fds{{listener_.fd, POLLIN, 0}};
    for (int fd : clients_)
      fds.push_back({fd, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), 50) <= 0)
      continue;
    if (fds[0].revents & POLLIN) {
      int client = ::accept(listener_.fd, nullptr, nullptr);
      if (client >= 0)
        clients_.push_back(client);
    }
    for (std::size_t i = 1; i < fds.size(); ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP)))
        continue;
      char buffer[65536];
      auto n = ::read(fds[i].fd, buffer, sizeof buffer);
      if (n <= 0 || !reply_(fds[i].fd,
                            std::string(buffer, static_cast<std::size_t>(n)))) {
        ::close(fds[i].fd);
        clients_.erase(std::find(clients_.begin(), clients_.end(), fds[i].fd));
      }
    }
  }
}

} // namespace outbox::test
