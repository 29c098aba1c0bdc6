#pragma once

// Fake servers in tests (a Redis that is loading, a web server on the
// Redis port) listen on a loopback port the kernel picks.

#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace outbox::test {

/// A listening TCP socket on 127.0.0.1 at a port the kernel picked.
struct loopback_listener {
  int fd = -1;
  int port = 0;
};

/// Opens one; throws std::runtime_error when it cannot. The caller closes
/// `fd`.
loopback_listener listen_on_loopback();

/// A fake server on its own thread: it accepts every client on a loopback
/// port and hands what each sends, read by read, to `reply`, which writes
/// its answer to the client's socket and says whether to keep it open.
class loopback_server {
public:
  using reply_function =
      std::function<bool(int client, const std::string& received)>;

  explicit loopback_server(reply_function reply);
  ~loopback_server();
  loopback_server(const loopback_server&) = delete;
  loopback_server& operator=(const loopback_server&) = delete;

  int port() const { return listener_.port; }

private:
  void serve();

  reply_function reply_;
  loopback_listener listener_;
  std::atomic<bool> done_{false};
  std::vector<int> clients_;
  std::thread thread_;
};

} // namespace outbox::test
