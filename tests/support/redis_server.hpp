#pragma once

#include "broker/connection.hpp"

#include <string>
#include <sys/types.h>
#include <vector>

namespace outbox::test {

/// A loopback port nothing listens on now (for a server a test starts
/// itself, e.g. through scripts/redis). It could be taken before use.
int free_loopback_port();

/// A private redis-server for one test: on a free loopback port, in its own
/// temporary directory, run in the foreground as our child (never
/// daemonized, so it can always be reaped) and killed if the test process
/// dies. The constructor returns once it answers PING.
class redis_server {
public:
  struct options {
    /// Turns on AOF with appendfsync always, so what was acknowledged
    /// survives kill() and start() (restart tests).
    bool aof = false;
    /// More redis-server arguments, e.g. {"--maxmemory-policy",
    /// "allkeys-lru"} or {"--rename-command", "CONFIG", ""}.
    std::vector<std::string> extra_args = {};
    /// Lines of a redis.conf the server reads first, e.g. "requirepass
    /// admin" or "user app on >secret ~* &* +@all": kept out of the
    /// command line, as a deployment keeps its passwords out of `ps`.
    std::vector<std::string> config_lines = {};
    /// Who the fixture itself is to the server (its PING and
    /// connection_options()): a password for a server with requirepass,
    /// and a user with it for an ACL user. Empty: no AUTH.
    std::string username = {};
    std::string password = {};
    /// The address it binds: loopback, or another address of this machine
    /// such as a host_network's bridge address, for clients in other
    /// network namespaces. Off loopback, protected mode is turned off (it
    /// refuses every non-loopback client of a server without a password).
    std::string bind_address = "127.0.0.1";
    /// Runs it as a Redis Sentinel (`--sentinel`); its `sentinel monitor`
    /// lines go in config_lines (the file is its own and writable: a
    /// sentinel rewrites it).
    bool sentinel = false;
  };

  /// Starts the server; throws std::runtime_error if it does not answer
  /// PING within 10 s.
  explicit redis_server(options opts);
  /// Starts the server with default options (no persistence).
  redis_server();
  /// Kills the server if still running, reaps it, removes its directory.
  ~redis_server();
  redis_server(const redis_server&) = delete;
  redis_server& operator=(const redis_server&) = delete;

  /// Where it listens (its bind address and port; the same after a
  /// restart).
  broker::endpoint endpoint() const;

  /// Connection options for it, with short timeouts suited to tests, and the
  /// fixture's user and password.
  broker::connection_options connection_options() const;

  /// Starts it again on the same port and directory (no-op if running).
  void start();
  /// SIGTERM, then SIGKILL if it is not gone within 5 s; reaps it.
  void stop();
  /// SIGKILL and reap: a crash.
  void kill();
  /// stop() then start().
  void restart();

  bool running() const { return pid_ > 0; }
  /// The process id, or -1 when not running.
  pid_t pid() const { return pid_; }
  /// Its working directory (AOF files, redis.log).
  const std::string& dir() const { return dir_; }

private:
  /// Forks and execs; returns false if it exits before answering PING.
  bool launch();
  void reap_with_deadline(int signal, int wait_ms);

  options options_;
  std::string dir_;
  int port_ = 0;
  pid_t pid_ = -1;
};

} // namespace outbox::test
