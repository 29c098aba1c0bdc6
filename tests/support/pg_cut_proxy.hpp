#pragma once

// A network cut at the worst moment for a writer, as PostgreSQL's wire
// protocol sees it: a proxy between the clients and a server that forwards
// everything until a transaction that bound one of the named statements
// (say append_event) sends its COMMIT. That COMMIT reaches the server, which
// commits; its answer is dropped, both sockets are closed, and for a while
// every new connection is closed as soon as it is accepted, as a cut plus a
// restart look from the client. The client cannot know whether its
// transaction committed.

#include "support/loopback_listener.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace outbox::test {

class pg_cut_proxy {
public:
  struct plan {
    /// The prepared statements whose transactions are cut (a Bind naming
    /// one marks the transaction).
    std::set<std::string> statements;
    /// How many such COMMITs are cut; those after are forwarded whole.
    int cuts = 1;
    /// How long new connections are closed once a cut happened.
    std::chrono::milliseconds refuse_for{4000};
  };

  /// Listens on a loopback port the kernel picks and forwards to
  /// 127.0.0.1:`server_port`.
  pg_cut_proxy(int server_port, plan what);
  ~pg_cut_proxy();
  pg_cut_proxy(const pg_cut_proxy&) = delete;
  pg_cut_proxy& operator=(const pg_cut_proxy&) = delete;

  int port() const { return listener_.port; }
  /// How many COMMITs were cut so far.
  int cuts_done() const { return cuts_done_.load(); }
  /// How many connections were closed unserved while refusing.
  int refused() const { return refused_.load(); }

private:
  struct link;
  void accept_clients();
  /// Each direction of a link has a thread of its own, blocking: one
  /// thread for both would stop reading one side while a write to the
  /// other waits, and a pipelining client and the server, each waiting for
  /// the other to read, would never move again.
  void client_to_server(link& l);
  void server_to_client(link& l);
  /// Forwards one whole message of the client's, or cuts the link at it;
  /// false when the link is over.
  bool client_message(link& l, const std::string& message);
  /// True, counting it, while cuts are left to make.
  bool take_a_cut();

  int server_port_;
  plan plan_;
  loopback_listener listener_;
  std::atomic<bool> done_{false};
  std::atomic<int> cuts_done_{0};
  std::atomic<int> refused_{0};
  /// Until when new clients are turned away (milliseconds of steady_clock).
  std::atomic<std::int64_t> refuse_until_ms_{0};
  std::mutex links_mutex_;
  std::vector<std::unique_ptr<link>> links_;
  std::thread acceptor_;
};

} // namespace outbox::test
