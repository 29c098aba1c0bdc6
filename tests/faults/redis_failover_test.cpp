#include "tests/faults/fault_fixture.hpp"

#include "broker/broker_error.hpp"

#include <csignal>
#include <functional>
#include <thread>

namespace outbox::test {
namespace {

/// Scenario: the Redis the pipeline points at stops taking writes for a
/// while, as after a failover (the address now names a replica: READONLY)
/// or when it is full (maxmemory under noeviction: OOM), for much longer
/// than lease.max_attempts x backoff. That is an outage, not a refusal:
/// no row may pay an attempt or end FAILED, the run says once what is
/// wrong and waits, and once writes go through again everything drains.
class FaultRedisFailover : public fault_fixture {
protected:
  void SetUp() override {
    fault_fixture::SetUp();
    // Few attempts and short backoffs: charged for the outage, every row
    // would be FAILED within a fraction of a second. The lease is 2 s: one
    // that runs out before a slow (sanitizer) relay hears the refusal is
    // charged like a dead relay's, which is not what these scenarios test.
    limit_attempts(3, 2000);
  }

  /// Rows charged so far: FAILED, or PENDING with an attempt left over (a
  /// released row is refunded; a leased one holds the attempt of its claim).
  std::int64_t charged_rows() const {
    return count("SELECT COUNT(*) FROM outbox WHERE status = 'FAILED' "
                 "OR (status = 'PENDING' AND attempts > 0)");
  }

  /// Runs a bounded pipeline through an outage that `begin` starts and
  /// `end` ends, and checks everything it must hold.
  void ride_out(const std::string& announcement,
                const std::function<void()>& begin,
                const std::function<void()>& end, const std::string& name) {
    begin();
    auto run = start_run({"--relays", "2", "--consumers", "1", "--orders",
                          "300", "--seed", std::to_string(seed_)},
                         true);
    ASSERT_TRUE(run->wait_for_stderr(announcement, 30'000))
        << "the run never said what is wrong with Redis";
    // Every order committed (the writer needs no Redis)...
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (count("SELECT COUNT(*) FROM orders") < 300 &&
           std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    // ...then the outage outlasts max_attempts x backoff many times over
    // (a duration is the condition here, not a synchronisation).
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    EXPECT_EQ(charged_rows(), 0) << "rows paid attempts for an outage";
    EXPECT_EQ(count("SELECT COUNT(*) FROM outbox WHERE status = "
                    "'PUBLISHED'"),
              0);
    EXPECT_FALSE(run->exited_within(0)) << "the bounded run gave up";

    end();
    auto r = run->wait(60'000);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    auto report = nlohmann::json::parse(r.out, nullptr, false);
    ASSERT_FALSE(report.is_discarded()) << r.out << r.err;
    EXPECT_TRUE(report.value("ok", false)) << report.dump(2);
    EXPECT_EQ(report.value("failed_rows", -1), 0);
    // Said once, however many relays and retries met it.
    auto first = r.err.find(announcement);
    ASSERT_NE(first, std::string::npos) << r.err;
    EXPECT_EQ(r.err.find(announcement, first + 1), std::string::npos) << r.err;

    auto check = finish(name, 0);
    EXPECT_EQ(check.figures.failed_rows, 0);
    EXPECT_EQ(check.figures.orders, 300);
    EXPECT_EQ(check.figures.published, check.figures.outbox_rows);
  }
};

TEST_F(FaultRedisFailover, AReplicaIsAnOutageUntilPromoted) {
  redis_server primary;
  auto where = redis_->endpoint().to_string();
  auto replica_of = [&](const std::vector<std::string>& target) {
    auto conn = redis();
    std::vector<std::string> argv{"REPLICAOF"};
    argv.insert(argv.end(), target.begin(), target.end());
    conn.command(argv);
  };
  ride_out(
      "Redis at " + where + " is read-only (a replica): waiting",
      [&] {
        replica_of({"127.0.0.1", std::to_string(primary.endpoint().port)});
        // Synced, it answers as a replica (READONLY), not as a Redis
        // loading the primary's dataset (LOADING).
        auto conn = redis();
        auto deadline =
            std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (broker::reply_text(*conn.command({"INFO", "replication"}))
                       .find("master_link_status:up") == std::string::npos &&
               std::chrono::steady_clock::now() < deadline)
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
        EXPECT_THROW(conn.command({"SET", "probe", "1"}), broker::broker_error);
      },
      [&] {
        replica_of({"NO", "ONE"});
      },
      "FaultRedisFailover.replica");
}

TEST_F(FaultRedisFailover, AFullRedisIsAnOutageUntilItHasRoom) {
  auto where = redis_->endpoint().to_string();
  auto set_maxmemory = [&](const std::string& bytes) {
    redis().command({"CONFIG", "SET", "maxmemory", bytes});
  };
  ride_out(
      "Redis at " + where +
          " is out of memory (maxmemory reached, noeviction): waiting",
      [&] {
        redis().command({"CONFIG", "SET", "maxmemory-policy", "noeviction"});
        set_maxmemory("1");
      },
      [&] { set_maxmemory("0"); }, "FaultRedisFailover.oom");
}

/// The outage begins once every row is published, so no relay retries:
/// a consumer-only bounded run cannot take the consumers' lock while
/// Redis is full. Its coordinator's retries are an outage too, not a
/// stall, however long they last; once Redis has room it drains.
TEST_F(FaultRedisFailover, ConsumersWaitForAFullRedisLongerThanAStall) {
  auto publish = run_orders(1, 0, 100);
  ASSERT_EQ(publish.exit_code, 0) << publish.out << publish.err;
  redis().command({"CONFIG", "SET", "maxmemory-policy", "noeviction"});
  redis().command({"CONFIG", "SET", "maxmemory", "1"});

  auto consume = start_run({"--relays", "0", "--consumers", "1"}, true);
  ASSERT_TRUE(consume->wait_for_stderr(
      "Redis at " + redis_->endpoint().to_string() +
          " is out of memory (maxmemory reached, noeviction): waiting",
      30'000))
      << "the consumers' side never said what it waits for";
  // Longer than the stall limit (2 x ttl + idle poll + 1 s = 2.1 s).
  EXPECT_FALSE(consume->exited_within(3500)) << "a full Redis taken for a "
                                                "stall";
  redis().command({"CONFIG", "SET", "maxmemory", "0"});
  auto r = consume->wait(60'000);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  auto check = finish("FaultRedisFailover.consumers", 0);
  EXPECT_EQ(check.figures.orders, 100);
}

} // namespace
} // namespace outbox::test
