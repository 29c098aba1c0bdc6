#include "support/pg_server.hpp"

#include "support/redis_server.hpp" // free_loopback_port

#include <libpq-fe.h>

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace outbox::test {

namespace {

constexpr const char* pg_bin = "/usr/lib/postgresql/15/bin";
constexpr int start_deadline_ms = 30'000;
constexpr int initdb_deadline_ms = 120'000;
constexpr int stop_deadline_ms = 10'000;

using clock_type = std::chrono::steady_clock;

/// Whom the cluster's programs run as: ourselves, or postgres when we are
/// root (initdb and postgres refuse to run as root). Looked up before
/// fork(): the child may only make system calls.
struct server_user {
  bool switch_user = false;
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;
};

server_user find_server_user() {
  server_user who;
  if (::geteuid() != 0)
    return who;
  passwd entry{};
  passwd* found = nullptr;
  std::vector<char> buffer(16384);
  if (::getpwnam_r("postgres", &entry, buffer.data(), buffer.size(), &found) !=
          0 ||
      found == nullptr)
    throw std::runtime_error(
        "running as root, and there is no user postgres to run PostgreSQL "
        "as (Debian's postgresql-common creates it)");
  who.switch_user = true;
  who.uid = entry.pw_uid;
  who.gid = entry.pw_gid;
  int count = 16;
  who.groups.resize(static_cast<size_t>(count));
  while (::getgrouplist("postgres", entry.pw_gid, who.groups.data(), &count) <
         0)
    who.groups.resize(static_cast<size_t>(count));
  who.groups.resize(static_cast<size_t>(count));
  return who;
}

/// Forks and execs `args` as `who`, stdout and stderr appended to `log`,
/// stdin /dev/null, no other descriptor of ours inherited. The child gets
/// SIGKILL if this thread dies (set after the user switch, which would
/// clear it).
pid_t spawn(const std::vector<std::string>& args, const server_user& who,
            const std::string& log) {
  int log_fd =
      ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (log_fd < 0)
    throw std::runtime_error("cannot open " + log);
  std::vector<std::string> copy = args;
  std::vector<char*> argv;
  for (auto& arg : copy)
    argv.push_back(arg.data());
  argv.push_back(nullptr);
  auto parent = ::getpid();
  pid_t child = ::fork();
  if (child < 0) {
    ::close(log_fd);
    throw std::runtime_error("fork failed");
  }
  if (child == 0) {
    if (who.switch_user &&
        (::setgroups(who.groups.size(), who.groups.data()) != 0 ||
         ::setgid(who.gid) != 0 || ::setuid(who.uid) != 0))
      ::_exit(126);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) // the parent died before prctl
      ::_exit(1);
    int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0)
      ::dup2(null_fd, STDIN_FILENO);
    ::dup2(log_fd, STDOUT_FILENO);
    ::dup2(log_fd, STDERR_FILENO);
    // Not the test's sockets and pipes: a server holding one open would
    // keep a reader from ever seeing its end.
    if (::syscall(SYS_close_range, 3U, ~0U, 0U) != 0)
      for (int fd = 3; fd < 1024; ++fd)
        ::close(fd);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(log_fd);
  return child;
}

std::string log_tail(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  auto all = text.str();
  return all.size() > 2000 ? all.substr(all.size() - 2000) : all;
}

/// libpq's key=value form of a connection over the unix socket in `dir`,
/// which only our server can have made.
std::string socket_conninfo(const std::string& dir, int port,
                            const std::string& database) {
  return "host='" + dir + "' port=" + std::to_string(port) +
         " user=outbox dbname=" + database + " connect_timeout=5";
}

} // namespace

pg_server::pg_server(options opts) : options_(std::move(opts)) {
  auto who = find_server_user();
  auto data = dir() + "/data";
  auto initdb_log = dir() + "/initdb.log";
  try {
    if (who.switch_user && ::chown(dir().c_str(), who.uid, who.gid) != 0)
      throw std::runtime_error("cannot give " + dir() + " to postgres");
    // --no-sync: a test's cluster need not survive a power loss.
    pid_t initdb =
        spawn({std::string(pg_bin) + "/initdb", "-D", data, "-U", "outbox",
               "--auth=trust", "-E", "UTF8", "--no-locale", "--no-sync"},
              who, initdb_log);
    int status = 0;
    auto deadline =
        clock_type::now() + std::chrono::milliseconds(initdb_deadline_ms);
    while (::waitpid(initdb, &status, WNOHANG) == 0) {
      if (clock_type::now() > deadline) {
        ::kill(initdb, SIGKILL);
        ::waitpid(initdb, &status, 0);
        throw std::runtime_error("initdb did not finish within 120 s");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
      throw std::runtime_error(
          "initdb failed" +
          std::string(who.switch_user
                          ? " (every folder above " + dir() +
                                " must let the user postgres through)"
                          : "") +
          ": " + log_tail(initdb_log));

    bool started = false;
    for (int attempt = 0; attempt < 3 && !started; ++attempt) {
      port_ = free_loopback_port();
      started = launch();
    }
    if (!started)
      throw std::runtime_error("postgres did not start: " +
                               log_tail(dir() + "/pg.log"));

    std::unique_ptr<PGconn, decltype(&PQfinish)> admin{
        PQconnectdb(socket_conninfo(dir(), port_, "postgres").c_str()),
        &PQfinish};
    if (PQstatus(admin.get()) != CONNECTION_OK)
      throw std::runtime_error(std::string("cannot connect to postgres: ") +
                               PQerrorMessage(admin.get()));
    std::unique_ptr<PGresult, decltype(&PQclear)> created{
        PQexec(admin.get(), "CREATE DATABASE outbox"), &PQclear};
    if (PQresultStatus(created.get()) != PGRES_COMMAND_OK)
      throw std::runtime_error(std::string("CREATE DATABASE outbox: ") +
                               PQerrorMessage(admin.get()));
  } catch (...) {
    // The destructor will not run; the directory goes with dir_.
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
         database;
}

bool pg_server::launch() {
  std::vector<std::string> args = {std::string(pg_bin) + "/postgres",
                                   "-D",
                                   dir() + "/data",
                                   "-p",
                                   std::to_string(port_),
                                   "-c",
                                   "listen_addresses=127.0.0.1",
                                   "-k",
                                   dir()};
  if (!options_.fsync)
    args.insert(args.end(), {"-c", "fsync=off"});
  for (const auto& setting : options_.settings)
    args.insert(args.end(), {"-c", setting});
  pid_ = spawn(args, find_server_user(), dir() + "/pg.log");

  // Ready once it answers on its own unix socket: postgres opens that
  // after its TCP socket, and exits if it cannot bind 127.0.0.1:port.
  auto conninfo = socket_conninfo(dir(), port_, "postgres");
  auto deadline =
      clock_type::now() + std::chrono::milliseconds(start_deadline_ms);
  while (clock_type::now() < deadline) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1; // exited: most likely the port was taken
      return false;
    }
    if (PQping(conninfo.c_str()) == PQPING_OK)
      return true;
    // Polling for an event with a deadline, not a sleep to synchronize.
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  signal_and_reap(SIGQUIT, stop_deadline_ms);
  throw std::runtime_error("postgres on port " + std::to_string(port_) +
                           " did not accept connections within 30 s: " +
                           log_tail(dir() + "/pg.log"));
}

void pg_server::start() {
  if (pid_ > 0)
    return;
  if (!launch())
    throw std::runtime_error("postgres did not restart on port " +
                             std::to_string(port_) + ": " +
                             log_tail(dir() + "/pg.log"));
}

void pg_server::signal_and_reap(int signal, int wait_ms) {
  ::kill(pid_, signal);
  auto deadline = clock_type::now() + std::chrono::milliseconds(wait_ms);
  while (clock_type::now() < deadline) {
    if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
      pid_ = -1;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
  pid_ = -1;
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
