#include "support/pg_server.hpp"

#include "support/pg_programs.hpp"
#include "support/pg_template.hpp"
#include "support/process.hpp"
#include "support/redis_server.hpp" // free_loopback_port

#include <libpq-fe.h>

#include <signal.h>
#include <sys/shm.h>
#include <sys/wait.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

namespace outbox::test {

namespace {

constexpr int pg_start_deadline_ms = 30'000;
constexpr int copy_deadline_ms = 60'000;
constexpr int stop_deadline_ms = 10'000;

using clock_type = std::chrono::steady_clock;

/// `address` as a one-host network for pg_hba.conf.
std::string host_network(const std::string& address) {
  return address + (address.find(':') == std::string::npos ? "/32" : "/128");
}

/// pg_hba.conf: scram-sha-256 for the role outbox (and options.roles) only,
/// from 127.0.0.1, from the other addresses it listens on (a client on this
/// host) and from the allowed networks; nothing else (no unix socket, no
/// trust).
std::string hba_rules(const pg_server::options& opts) {
  std::string rules = "# TYPE DATABASE USER ADDRESS METHOD\n";
  std::string users = "outbox";
  for (const auto& role : opts.roles)
    users += "," + role;
  auto allow = [&rules, &users](const std::string& network) {
    rules += "host all " + users + " " + network + " scram-sha-256\n";
  };
  allow("127.0.0.1/32");
  for (const auto& address : opts.listen_addresses)
    allow(host_network(address));
  for (const auto& network : opts.allowed_networks)
    allow(network);
  return rules;
}

/// Removes the System V segment a postmaster killed by SIGKILL leaves
/// behind (it removes it itself on any other shutdown), once its children,
/// which exit when they see it gone, no longer attach it; waits for that
/// at most `wait_ms`.
void remove_leftover_segments(pid_t postmaster, int wait_ms) {
  auto deadline = clock_type::now() + std::chrono::milliseconds(wait_ms);
  for (auto segments = pg::segments_created_by(postmaster); !segments.empty();
       segments = pg::segments_created_by(postmaster)) {
    bool attached = false;
    for (auto [id, processes] : segments) {
      if (processes == 0)
        ::shmctl(id, IPC_RMID, nullptr);
      attached = attached || processes > 0;
    }
    if (!attached || clock_type::now() > deadline)
      return;
    // Polling with a deadline: no event tells when a process detaches.
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

} // namespace

pg_server::server_folder::~server_folder() {
  if (path.empty())
    return;
  try {
    pg::remove_server_folder(path);
  } catch (...) {
    // What is left goes with the temporary directory around it.
  }
}

pg_server::pg_server(options opts) : options_(std::move(opts)) {
  const auto& cluster = pg::shared_template();
  pg::let_server_through(dir());
  pg::write_new_file(passfile(), "*:*:*:outbox:" + cluster.password + "\n",
                     0600);
  pg::write_new_file(dir() + "/pg_hba.conf", hba_rules(options_), 0640, true);
  pg::make_server_folder(data_dir());
  data_.path = data_dir();
  // As the server's user, who owns both clusters; a reflink where the
  // file system has them.
  pg::run(
      {"/bin/cp", "-a", "--reflink=auto", cluster.data_dir + "/.", data_dir()},
      dir() + "/pg.log", "copying the template cluster", copy_deadline_ms);
  try {
    bool started = false;
    for (int attempt = 0; attempt < 3 && !started; ++attempt) {
      port_ = free_loopback_port();
      started = launch();
    }
    if (!started)
      throw std::runtime_error("postgres did not start: " +
                               log_tail(dir() + "/pg.log"));
  } catch (...) {
    // The destructor will not run; data_ and dir_ go all the same.
    if (pid_ > 0)
      signal_and_reap(SIGQUIT, stop_deadline_ms);
    throw;
  }
}

pg_server::pg_server() : pg_server(options{}) {}

pg_server::~pg_server() {
  if (pid_ > 0)
    signal_and_reap(SIGQUIT, stop_deadline_ms);
}

std::string pg_server::uri() const {
  return uri("outbox");
}

std::string pg_server::uri(const std::string& database) const {
  return "postgresql://outbox@127.0.0.1:" + std::to_string(port_) + "/" +
         database + "?passfile=" + pg::uri_escape(passfile());
}

std::string pg_server::uri_for_host(const std::string& host) const {
  auto bracketed =
      host.find(':') == std::string::npos ? host : "[" + host + "]";
  return "postgresql://outbox@" + bracketed + ":" + std::to_string(port_) +
         "/outbox?passfile=" + pg::uri_escape(passfile());
}

bool pg_server::launch() {
  std::string listen = "127.0.0.1";
  for (const auto& address : options_.listen_addresses)
    listen += "," + address;
  std::vector<std::string> args = {
      std::string(pg::bin_dir) + "/postgres", "-D", data_dir(), "-p",
      std::to_string(port_), "-c", "listen_addresses=" + listen,
      // No unix socket: TCP with a password is the only way in.
      "-c", "unix_socket_directories=",
      // Outside data/: written by us, read by the server.
      "-c", "hba_file=" + dir() + "/pg_hba.conf",
      // Dynamic shared memory as files in data/pg_dynshmem, not in
      // /dev/shm, where a killed server would leave its segments.
      "-c", "dynamic_shared_memory_type=mmap"};
  if (!options_.fsync)
    args.insert(args.end(), {"-c", "fsync=off"});
  for (const auto& setting : options_.settings)
    args.insert(args.end(), {"-c", setting});
  pid_ = pg::spawn(args, dir() + "/pg.log");
  if (wait_for_server(pid_, pg_start_deadline_ms,
                      [this] { return accepts_connections(); }))
    return true;
  if (pid_ < 0)
    return false; // exited: most likely the port was taken
  signal_and_reap(SIGQUIT, stop_deadline_ms);
  throw std::runtime_error("postgres on port " + std::to_string(port_) +
                           " did not accept connections within 30 s: " +
                           log_tail(dir() + "/pg.log"));
}

bool pg_server::accepts_connections() const {
  // Another fixture's server (a copy of the same template, so the same
  // password) may hold the port ours failed to bind: ours is the one
  // working on our data.
  auto conninfo = "host=127.0.0.1 port=" + std::to_string(port_) +
                  " user=outbox dbname=postgres connect_timeout=2"
                  " sslmode=disable passfile='" +
                  passfile() + "'";
  std::unique_ptr<PGconn, decltype(&PQfinish)> conn{
      PQconnectdb(conninfo.c_str()), &PQfinish};
  if (PQstatus(conn.get()) != CONNECTION_OK)
    return false;
  std::unique_ptr<PGresult, decltype(&PQclear)> result{
      PQexec(conn.get(), "SELECT current_setting('data_directory')"), &PQclear};
  return PQresultStatus(result.get()) == PGRES_TUPLES_OK &&
         PQntuples(result.get()) == 1 &&
         PQgetvalue(result.get(), 0, 0) == data_dir();
}

void pg_server::start() {
  if (pid_ > 0)
    return;
  launch_again([this] { return launch(); }, "postgres", port_,
               dir() + "/pg.log");
}

void pg_server::signal_and_reap(int signal, int wait_ms) {
  auto postmaster = pid_;
  test::signal_and_reap(postmaster, signal, wait_ms);
  pid_ = -1;
  remove_leftover_segments(postmaster, stop_deadline_ms);
}

void pg_server::stop() {
  if (pid_ > 0)
    signal_and_reap(SIGINT, stop_deadline_ms);
}

void pg_server::crash() {
  if (pid_ > 0)
    signal_and_reap(SIGQUIT, stop_deadline_ms);
}

void pg_server::restart() {
  stop();
  start();
}

} // namespace outbox::test
