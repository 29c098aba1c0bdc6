#pragma once

#include "support/temp_dir.hpp"

#include <sys/types.h>

#include <string>
#include <vector>

namespace outbox::test {

/// A private PostgreSQL 15 cluster for one test: initdb'd in its own
/// temporary directory (the role outbox as superuser, the database outbox,
/// trust on loopback), on a free loopback port, with its unix socket in that
/// directory. The postmaster runs in the foreground as our child (as the
/// user postgres when the tests run as root, since PostgreSQL refuses root),
/// so it can always be reaped by pid, and it is killed if the test process
/// dies. The constructor returns once it accepts connections.
class pg_server {
public:
  struct options {
    /// fsync of WAL and data files. Off by default: a crash here is a
    /// process crash (crash(), kill -9), after which what the kernel holds
    /// survives as it does with fsync on; only a power loss would differ.
    bool fsync = false;
    /// More settings, "name=value" each (postgres -c), e.g.
    /// "max_connections=20".
    std::vector<std::string> settings = {};
  };

  /// Creates and starts the cluster; throws std::runtime_error (with the
  /// end of its log) if it does not accept connections within 30 s.
  explicit pg_server(options opts);
  pg_server();
  /// Stops the server if it runs (immediate shutdown, SIGKILL if it
  /// outlives 10 s), reaps it and removes its directory.
  ~pg_server();
  pg_server(const pg_server&) = delete;
  pg_server& operator=(const pg_server&) = delete;

  /// postgresql://outbox@127.0.0.1:PORT/outbox (the same after a restart).
  std::string uri() const;
  /// The same for another database of the cluster (e.g. "postgres").
  std::string uri(const std::string& database) const;
  int port() const { return port_; }

  /// Starts it again on the same port and data (no-op if running): after
  /// crash(), with crash recovery. Throws if it does not come back.
  void start();
  /// Fast shutdown (SIGINT: sessions ended, checkpoint), SIGKILL if it is
  /// not gone within 10 s; reaps it.
  void stop();
  /// Immediate shutdown (SIGQUIT, as `pg_ctl -m immediate stop`): every
  /// session dies at once, no checkpoint, WAL recovery at the next start.
  /// A crash as the database sees it; reaped.
  void crash();
  /// stop() if running, then start().
  void restart();

  bool running() const { return pid_ > 0; }
  /// The postmaster's process id, or -1 when not running.
  pid_t pid() const { return pid_; }
  /// Its directory: data/ (the cluster), pg.log, the unix socket.
  std::string dir() const { return dir_.path().string(); }

private:
  /// Forks and execs the postmaster; returns false if it exits before
  /// accepting connections (most likely its port was taken).
  bool launch();
  void signal_and_reap(int signal, int wait_ms);

  options options_;
  temp_dir dir_{"outbox-pg"};
  int port_ = 0;
  pid_t pid_ = -1;
};

} // namespace outbox::test
