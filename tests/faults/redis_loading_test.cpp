#include "support/loopback_listener.hpp"
#include "tests/faults/fault_fixture.hpp"

#include <SQLiteCpp/Database.h>

#include <unistd.h>

#include <csignal>
#include <thread>

namespace outbox::test {
namespace {

/// A loopback server that answers every command the way a Redis does while
/// it loads its dataset after a restart (AOF replay): "-LOADING ...".
class loading_redis : public loopback_server {
public:
  loading_redis() : loopback_server(answer) {}

private:
  static bool answer(int client, const std::string& received) {
    static const std::string loading =
        "-LOADING Redis is loading the dataset in memory\r\n";
    // One error per command: count the "*<n>" array headers.
    for (std::size_t at = 0; at < received.size(); ++at)
      if (received[at] == '*' && (at == 0 || received[at - 1] == '\n'))
        (void)!::write(client, loading.data(), loading.size());
    return true;
  }
};

using FaultRedisLoading = fault_fixture;

/// Scenario 3's restart window: a restarted Redis answers "-LOADING" until it
/// has replayed its AOF. That is Redis being unavailable, not Redis refusing
/// the batch: the relay must hand its rows back without spending an attempt
/// (and so never turn them FAILED), then retry once Redis is ready.
TEST_F(FaultRedisLoading, LoadingRedisIsUnavailableNotARefusal) {
  write_config({{"db", {{"busy_timeout_ms", 200}}},
                {"redis", {{"io_timeout_ms", 250}}},
                {"lease",
                 {{"ttl_ms", 500},
                  {"max_attempts", 2},
                  {"backoff_base_ms", 10},
                  {"backoff_max_ms", 20}}},
                {"run", {{"idle_poll_max_ms", 20}}}});
  auto orders = outbox({"run", "--relays", "0", "--consumers", "0", "--orders",
                        "20", "--until-drained", "--json"});
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
