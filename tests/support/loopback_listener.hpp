#pragma once

// Fake servers in tests (a Redis that is loading, a web server on the
// Redis port) listen on a loopback port the kernel picks.

namespace outbox::test {

/// A listening TCP socket on 127.0.0.1 at a port the kernel picked.
struct loopback_listener {
  int fd = -1;
  int port = 0;
};

/// Opens one; throws std::runtime_error when it cannot. The caller closes
/// `fd`.
loopback_listener listen_on_loopback();

} // namespace outbox::test
