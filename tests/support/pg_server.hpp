#pragma once

#include "support/temp_dir.hpp"

#include <sys/types.h>

#include <string>
#include <vector>

namespace outbox::test {

/// A private PostgreSQL 15 cluster for one test, in its own temporary
/// directory: a copy of a template cluster made once (support/pg_template:
/// the role outbox as superuser, the database outbox), on a free loopback
/// port, without a unix socket. Every connection authenticates with
/// scram-sha-256; the password is in passfile(), which uri() names, so no
/// secret is ever on a command line. The postmaster runs in the foreground
/// as our child (as the user postgres when the tests run as root, since
/// PostgreSQL refuses root), so it can always be reaped by pid. The
/// constructor returns once it accepts connections.
///
/// The server gets SIGKILL when the thread that started it ends
/// (PR_SET_PDEATHSIG is per thread, not per process): construct it, and
/// call start() and restart(), from a thread that outlives the server,
/// e.g. the test's own.
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
    // Added after settings, so that positional initializers written for
    // {fsync, settings} keep their meaning.
    /// Addresses to listen on besides 127.0.0.1, e.g. a bridge's
    /// 10.231.0.1 that relays in network namespaces reach; each also gets
    /// a pg_hba line for itself (a client on this host connecting to it).
    std::vector<std::string> listen_addresses = {};
    /// Client networks (CIDR, e.g. "10.231.0.0/24") allowed to connect
    /// with the password, besides 127.0.0.1 and the listen addresses.
    std::vector<std::string> allowed_networks = {};
    /// More roles pg_hba.conf lets in with their password, as the role
    /// outbox (e.g. "outbox_relay"); the test creates them.
    std::vector<std::string> roles = {};
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

  /// postgresql://outbox@127.0.0.1:PORT/outbox?passfile=PASSFILE (the same
  /// after a restart).
  std::string uri() const;
  /// The same for another database of the cluster (e.g. "postgres").
  std::string uri(const std::string& database) const;
  /// The same with another of its addresses as host (a listen address).
  std::string uri_for_host(const std::string& host) const;
  /// The libpq password file of the role outbox (pgpass format, 0600,
  /// ours).
  std::string passfile() const { return dir() + "/pgpass"; }
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
  /// Its directory (ours; as root 0710 with the group postgres): data/
  /// (the cluster, the server's user's), pg.log, pg_hba.conf, pgpass.
  std::string dir() const { return dir_.path().string(); }

private:
  /// Forks and execs the postmaster; returns false if it exits before
  /// accepting connections (most likely its port was taken).
  bool launch();
  /// True once our server accepts the role outbox with its password.
  bool accepts_connections() const;
  void signal_and_reap(int signal, int wait_ms);
  std::string data_dir() const { return dir() + "/data"; }

  /// Removes data/ as the user who owns it before dir_ goes.
  struct server_folder {
    std::string path;
    ~server_folder();
  };

  options options_;
  temp_dir dir_{"outbox-pg"};
  server_folder data_;
  int port_ = 0;
  pid_t pid_ = -1;
};

} // namespace outbox::test
