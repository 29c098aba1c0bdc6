#include "support/pg_cut_proxy.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cstdint>
#include <cstring>
#include <stdexcept>

namespace outbox::test {

namespace {

/// The codes of the two requests a client may send before its startup
/// message (PostgreSQL's protocol, "Message Formats").
constexpr std::uint32_t ssl_request = 80877103;
constexpr std::uint32_t gss_request = 80877104;

std::uint32_t big_endian_at(const std::string& s, std::size_t at) {
  std::uint32_t v = 0;
  std::memcpy(&v, s.data() + at, 4);
  return ntohl(v);
}

bool write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    auto n = ::send(fd, data, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

/// No Nagle: the proxy forwards message by message, and a small write held
/// back for the peer's delayed ACK costs 40 ms a message (a group of 512
/// orders took 45 s).
void no_delay(int fd) {
  int on = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
}

int connect_to(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return -1;
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<std::uint16_t>(port));
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) {
    ::close(fd);
    return -1;
  }
  no_delay(fd);
  return fd;
}

/// The null-terminated string at `at` of a message body, and where the
/// next field starts.
std::string c_string(const std::string& s, std::size_t& at) {
  auto end = s.find('\0', at);
  if (end == std::string::npos)
    end = s.size();
  auto text = s.substr(at, end - at);
  at = end + 1;
  return text;
}

bool starts_with_word(const std::string& sql, const char* word) {
  auto n = std::strlen(word);
  if (sql.size() < n)
    return false;
  for (std::size_t i = 0; i < n; ++i)
    if (std::toupper(static_cast<unsigned char>(sql[i])) != word[i])
      return false;
  return sql.size() == n || !std::isalpha(static_cast<unsigned char>(sql[n]));
}

} // namespace

std::int64_t steady_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct pg_cut_proxy::link {
  int client = -1;
  int server = -1;
  /// Before the startup message, messages have no type byte.
  bool startup = true;
  /// The open transaction bound one of the plan's statements.
  bool marked = false;
  /// Cut: what the server still says is read and dropped.
  std::atomic<bool> cut{false};
  std::thread up;
  std::thread down;
};

pg_cut_proxy::pg_cut_proxy(int server_port, plan what)
    : server_port_(server_port), plan_(std::move(what)),
      listener_(listen_on_loopback()), acceptor_([this] { accept_clients(); }) {
}

pg_cut_proxy::~pg_cut_proxy() {
  done_ = true;
  acceptor_.join();
  // Wakes every thread still blocked on a socket, then waits for it.
  for (auto& l : links_) {
    ::shutdown(l->client, SHUT_RDWR);
    ::shutdown(l->server, SHUT_RDWR);
  }
  for (auto& l : links_) {
    l->up.join();
    l->down.join();
    ::close(l->client);
    ::close(l->server);
  }
  ::close(listener_.fd);
}

void pg_cut_proxy::accept_clients() {
  while (!done_) {
    pollfd ready{listener_.fd, POLLIN, 0};
    if (::poll(&ready, 1, 50) <= 0)
      continue;
    int client = ::accept4(listener_.fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0)
      continue;
    if (steady_ms() < refuse_until_ms_.load()) {
      ++refused_;
      ::close(client);
      continue;
    }
    int server = connect_to(server_port_);
    if (server < 0) {
      ::close(client);
      continue;
    }
    no_delay(client);
    auto l = std::make_unique<link>();
    l->client = client;
    l->server = server;
    auto& started = *l;
    started.up = std::thread([this, &started] { client_to_server(started); });
    started.down = std::thread([this, &started] { server_to_client(started); });
    std::lock_guard<std::mutex> hold{links_mutex_};
    links_.push_back(std::move(l));
  }
}

void pg_cut_proxy::server_to_client(link& l) {
  char buffer[65536];
  for (;;) {
    auto n = ::recv(l.server, buffer, sizeof buffer, 0);
    if (n <= 0)
      break;
    // After a cut: the answer to the COMMIT, dropped.
    if (!l.cut && !write_all(l.client, buffer, static_cast<std::size_t>(n)))
      break;
  }
  // The server is gone (or the client is): so is the link.
  ::shutdown(l.client, SHUT_RDWR);
}

void pg_cut_proxy::client_to_server(link& l) {
  std::string pending;
  char buffer[65536];
  for (;;) {
    auto n = ::recv(l.client, buffer, sizeof buffer, 0);
    if (n <= 0)
      break;
    pending.append(buffer, static_cast<std::size_t>(n));
    for (;;) {
      std::size_t header = l.startup ? 4 : 5;
      if (pending.size() < header)
        break;
      auto length = big_endian_at(pending, l.startup ? 0 : 1);
      std::size_t whole = l.startup ? length : length + 1;
      if (whole < header || pending.size() < whole)
        break;
      auto message = pending.substr(0, whole);
      pending.erase(0, whole);
      if (!client_message(l, message))
        return;
    }
  }
  // The client is gone: the server sees the end, as with no proxy.
  ::shutdown(l.server, SHUT_WR);
}

bool pg_cut_proxy::take_a_cut() {
  int done = cuts_done_.load();
  while (done < plan_.cuts &&
         !cuts_done_.compare_exchange_weak(done, done + 1)) {
  }
  return done < plan_.cuts;
}

bool pg_cut_proxy::client_message(link& l, const std::string& message) {
  if (l.startup) {
    auto code = big_endian_at(message, 4);
    // No encryption here: the client goes on in clear.
    if (code == ssl_request || code == gss_request)
      return write_all(l.client, "N", 1);
    l.startup = false;
    return write_all(l.server, message.data(), message.size());
  }
  std::size_t at = 5;
  if (message[0] == 'B') {
    c_string(message, at); // the portal
    if (plan_.statements.count(c_string(message, at)) != 0)
      l.marked = true;
  } else if (message[0] == 'Q') {
    auto sql = c_string(message, at);
    bool commit = starts_with_word(sql, "COMMIT");
    if (commit && l.marked && take_a_cut()) {
      // The COMMIT reaches the server, which then sees the end of input
      // (so it commits, answers into the void and ends); the client sees
      // its connection closed, with no answer.
      refuse_until_ms_ = steady_ms() + plan_.refuse_for.count();
      l.cut = true;
      write_all(l.server, message.data(), message.size());
      ::shutdown(l.server, SHUT_WR);
      ::shutdown(l.client, SHUT_RDWR);
      return false;
    }
    if (commit || starts_with_word(sql, "BEGIN") ||
        starts_with_word(sql, "ROLLBACK"))
      l.marked = false;
  }
  return write_all(l.server, message.data(), message.size());
}

} // namespace outbox::test
