#include "faults/fault_fixture.hpp"
#include "support/loopback_listener.hpp"

#include <SQLiteCpp/Database.h>

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <fstream>
#include <thread>

namespace outbox::test {
namespace {

/// A loopback server that answers every command the way a Redis does while
/// it loads its dataset after a restart (AOF replay): "-LOADING ...".
class loading_redis {
public:
  loading_redis() {
    auto listener = listen_on_loopback();
    listener_ = listener.fd;
    port_ = listener.port;
    thread_ = std::thread([this] { serve(); });
  }

  ~loading_redis() {
    done_ = true;
    thread_.join();
    for (int fd : clients_)
      ::close(fd);
    ::close(listener_);
  }

  int port() const { return port_; }

private:
  void serve() {
    static const std::string loading =
        "-LOADING Redis is loading the dataset in memory\r\n";
    while (!done_) {
      std::vector<pollfd> fds{{listener_, POLLIN, 0}};
      for (int fd : clients_)
        fds.push_back({fd, POLLIN, 0});
      if (::poll(fds.data(), fds.size(), 50) <= 0)
        continue;
      if (fds[0].revents & POLLIN)
        clients_.push_back(::accept(listener_, nullptr, nullptr));
      for (std::size_t i = 1; i < fds.size(); ++i) {
        if (!(fds[i].revents & (POLLIN | POLLHUP)))
          continue;
        char buffer[65536];
        auto n = ::read(fds[i].fd, buffer, sizeof buffer);
        if (n <= 0) {
          ::close(fds[i].fd);
          clients_.erase(
              std::find(clients_.begin(), clients_.end(), fds[i].fd));
          continue;
        }
        // One error per command: count the "*<n>" array headers.
        for (ssize_t at = 0; at < n; ++at)
          if (buffer[at] == '*' && (at == 0 || buffer[at - 1] == '\n'))
            (void)!::write(fds[i].fd, loading.data(), loading.size());
      }
    }
  }

  int listener_ = -1;
  int port_ = 0;
  std::atomic<bool> done_{false};
  std::vector<int> clients_;
  std::thread thread_;
};

using FaultRedisLoading = fault_fixture;

/// Scenario 3's restart window: a restarted Redis answers "-LOADING" until it
/// has replayed its AOF. That is Redis being unavailable, not Redis refusing
/// the batch: the relay must hand its rows back without spending an attempt
/// (and so never turn them FAILED), then retry once Redis is ready.
TEST_F(FaultRedisLoading, LoadingRedisIsUnavailableNotARefusal) {
  std::ofstream{config_path_} << R"({
    "db": {"busy_timeout_ms": 200},
    "redis": {"io_timeout_ms": 250},
    "lease": {"ttl_ms": 500, "batch": 64, "max_attempts": 2,
              "backoff_base_ms": 10, "backoff_max_ms": 20},
    "run": {"poll_interval_ms": 10, "idle_poll_max_ms": 20,
            "consumer_block_ms": 50}
  })";
  auto orders =
      run_outbox({"run", "--relays", "0", "--consumers", "0", "--orders", "20",
                  "--until-drained", "--json", "--db", db_path_, "--redis",
                  redis_->endpoint().to_string(), "--config", config_path_},
                 dir_.path().string());
  ASSERT_EQ(orders.exit_code, 0) << orders.out << orders.err;

  loading_redis loading;
  child_process relay{
      outbox_argv({"run", "--relays", "1", "--consumers", "0", "--db", db_path_,
                   "--redis", "127.0.0.1:" + std::to_string(loading.port()),
                   "--config", config_path_}),
      dir_.path().string()};
  // The relay itself meets it (not only the start's checks), says once
  // what it waits for, and keeps trying: many publish attempts.
  EXPECT_TRUE(relay.wait_for_stderr(
      "Redis at 127.0.0.1:" + std::to_string(loading.port()) +
          " is loading its dataset: waiting",
      20'000))
      << "the relay never met the loading Redis";
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_FALSE(relay.exited_within(0)) << "the run gave up on a loading Redis";
  relay.signal(SIGTERM);
  auto r = relay.wait(30'000);

  SQLite::Database db{db_path_, SQLite::OPEN_READONLY};
  EXPECT_EQ(db.execAndGet("SELECT COUNT(*) FROM outbox WHERE status = "
                          "'FAILED' OR attempts > 0")
                .getInt(),
            0)
      << "rows were charged for Redis loading: " << r.err;

  // Once Redis is ready, the same rows go through.
  drain();
  finish("FaultRedisLoading", 0);
}

} // namespace
} // namespace outbox::test
