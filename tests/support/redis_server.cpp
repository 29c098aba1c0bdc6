#include "support/redis_server.hpp"

#include "support/process.hpp"

#include <hiredis/hiredis.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

namespace outbox::test {

namespace {

constexpr const char* redis_binary = "/usr/bin/redis-server";
constexpr int redis_start_deadline_ms = 10'000;

using clock_type = std::chrono::steady_clock;

/// Binds 127.0.0.1:`port` (0: any) with SO_REUSEADDR, as redis-server
/// does; returns the port bound, or 0 when it is taken.
int bind_loopback(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0)
    throw std::runtime_error("socket() failed");
  int on = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  socklen_t len = sizeof addr;
  int bound = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
    bound = ntohs(addr.sin_port);
  ::close(fd);
  return bound;
}

/// The first port of the kernel's ephemeral range (32768 if unreadable).
int ephemeral_low() {
  std::ifstream range{"/proc/sys/net/ipv4/ip_local_port_range"};
  int low = 0;
  return range >> low && low > 0 ? low : 32768;
}

std::string make_temp_dir() {
  std::string pattern = "/tmp/outbox-redis-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr)
    throw std::runtime_error("mkdtemp failed");
  return pattern;
}

/// True once the server answers PING with PONG (not LOADING or an error),
/// after AUTH when the fixture has a password.
bool answers_ping(int port, const redis_server::options& opts) {
  timeval timeout{0, 200'000};
  auto* c = redisConnectWithTimeout(opts.bind_address.c_str(), port, timeout);
  if (c == nullptr)
    return false;
  bool pong = false;
  if (c->err == 0 && redisSetTimeout(c, timeout) == REDIS_OK) {
    if (!opts.password.empty()) {
      std::vector<std::string> auth{"AUTH"};
      if (!opts.username.empty())
        auth.push_back(opts.username);
      auth.push_back(opts.password);
      std::vector<const char*> data;
      std::vector<size_t> sizes;
      for (auto& arg : auth) {
        data.push_back(arg.data());
        sizes.push_back(arg.size());
      }
      auto* r = static_cast<redisReply*>(redisCommandArgv(
          c, static_cast<int>(auth.size()), data.data(), sizes.data()));
      if (r != nullptr)
        freeReplyObject(r);
    }
    auto* r = static_cast<redisReply*>(redisCommand(c, "PING"));
    pong = r != nullptr && r->type == REDIS_REPLY_STATUS &&
           std::string(r->str, r->len) == "PONG";
    if (r != nullptr)
      freeReplyObject(r);
  }
  redisFree(c);
  return pong;
}

} // namespace

// Below the kernel's ephemeral range: a port in that
// range can be handed to any outgoing connection on the machine while its
// server is down for a restart (FaultKillRedis), and the restart would
// fail. The port could still be taken before redis-server binds it;
// launch() then fails and the constructor tries another.
int free_loopback_port() {
  static std::mt19937 pick{std::random_device{}()};
  constexpr int lowest = 10'000;
  int low = ephemeral_low();
  for (int attempt = 0; low > lowest + 1000 && attempt < 100; ++attempt) {
    int port = std::uniform_int_distribution<int>(lowest, low - 1)(pick);
    if (bind_loopback(port) == port)
      return port;
  }
  if (int port = bind_loopback(0))
    return port;
  throw std::runtime_error("cannot bind a free loopback port");
}

redis_server::redis_server(options opts)
    : options_(opts), dir_(make_temp_dir()) {
  try {
    for (int attempt = 0; attempt < 3; ++attempt) {
      port_ = free_loopback_port();
      if (launch())
        return;
    }
    throw std::runtime_error("redis-server did not start: " +
                             log_tail(dir_ + "/redis.log"));
  } catch (...) {
    // The destructor will not run: clean up here.
    kill();
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
    throw;
  }
}

redis_server::redis_server() : redis_server(options{}) {}

redis_server::~redis_server() {
  if (pid_ > 0)
    kill();
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

broker::endpoint redis_server::endpoint() const {
  broker::endpoint where;
  where.host = options_.bind_address;
  where.port = port_;
  return where;
}

broker::connection_options redis_server::connection_options() const {
  broker::connection_options result;
  result.where = endpoint();
  result.connect_timeout_ms = 500;
  result.io_timeout_ms = 2000;
  result.username = options_.username;
  result.password = options_.password;
  return result;
}

bool redis_server::launch() {
  // Everything the child needs is built before fork(): after it, only
  // async-signal-safe calls.
  std::string config_file = dir_ + "/redis.conf";
  {
    std::ofstream conf{config_file, std::ios::trunc};
    for (const auto& line : options_.config_lines)
      conf << line << '\n';
  }
  std::vector<std::string> args = {redis_binary, config_file};
  if (options_.sentinel)
    args.push_back("--sentinel");
  args.insert(args.end(), {"--port", std::to_string(port_), "--bind",
                           options_.bind_address, "--daemonize", "no", "--save",
                           "", "--dir", dir_, "--logfile", "redis.log"});
  if (options_.bind_address != "127.0.0.1")
    args.insert(args.end(), {"--protected-mode", "no"});
  if (options_.aof) {
    args.insert(args.end(), {"--appendonly", "yes", "--appendfsync", "always"});
  } else {
    args.insert(args.end(), {"--appendonly", "no"});
  }
  args.insert(args.end(), options_.extra_args.begin(),
              options_.extra_args.end());
  auto argv = exec_argv(args);
  auto parent = ::getpid();
  pid_t child = ::fork();
  if (child < 0)
    throw std::runtime_error("fork failed");
  if (child == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) // the parent died before prctl
      ::_exit(1);
    int null_fd = ::open("/dev/null", O_RDWR);
    if (null_fd >= 0) {
      ::dup2(null_fd, STDIN_FILENO);
      ::dup2(null_fd, STDOUT_FILENO);
    }
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  pid_ = child;
  if (wait_for_server(pid_, redis_start_deadline_ms,
                      [&] { return answers_ping(port_, options_); }))
    return true;
  if (pid_ < 0)
    return false; // exited: most likely the port was taken
  kill();
  throw std::runtime_error(
      "redis-server on port " + std::to_string(port_) +
      " did not answer PING within 10 s: " + log_tail(dir_ + "/redis.log"));
}

void redis_server::start() {
  if (pid_ > 0)
    return;
  launch_again([this] { return launch(); }, "redis-server", port_,
               dir_ + "/redis.log");
}

void redis_server::reap_with_deadline(int signal, int wait_ms) {
  signal_and_reap(pid_, signal, wait_ms);
  pid_ = -1;
}

void redis_server::stop() {
  if (pid_ > 0)
    reap_with_deadline(SIGTERM, 5000);
}

void redis_server::kill() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
}

void redis_server::restart() {
  stop();
  start();
}

} // namespace outbox::test
