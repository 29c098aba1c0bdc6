#include "tests/faults/fault_fixture.hpp"

#include <gmock/gmock.h>
#include <thread>

namespace outbox::test {
namespace {

using FaultKillRedis = durable_fault_fixture;

/// Scenario 3: Redis SIGKILLed mid-run and restarted on the same port, twice,
/// with AOF and appendfsync always (what docs/redis.md recommends). The same
/// relay and consumer processes ride it out: relays release their rows and
/// back off, consumers put their in-flight entries back and retry, the
/// coordinators' probes report the trouble and carry on. Nothing Redis
/// acknowledged is lost, so every PUBLISHED row ends up processed.
TEST_F(FaultKillRedis, RedisSigkilledTwiceLosesNothingAcknowledged) {
  auto relays = start_run({"--relays", "2", "--consumers", "0"});
  auto consumer = start_run({"--relays", "0", "--consumers", "2"});
  // Running before Redis dies: a process still starting up (its checks of
  // Redis) exits 1 when Redis goes away, and this scenario is about the
  // ones that live through it. A slow start (a sanitized build) takes
  // longer than the first outage's delay.
  ASSERT_TRUE(relays->wait_for_stderr("running;", 60'000))
      << "the relay process never started: " << relays->wait(0).err;
  ASSERT_TRUE(consumer->wait_for_stderr("running;", 60'000))
      << "the consumer process never started: " << consumer->wait(0).err;
  // Redis fsyncs every write: consumers are the bottleneck, so a bounded
  // load keeps the pipeline busy through both outages.
  auto load = waves(200, scaled(5));
  load.tolerate_redis_outages();

  // Two outages within the fault window; when Redis dies and how long it
  // stays down are the fault itself.
  const auto window = static_cast<int>(fault_window().count());
  std::int64_t kills = 0;
  for (int outage = 0; outage < 2; ++outage) {
    load.pump(random_ms(window / 8, window / 3));
    redis_->kill();
    ++kills;
    // No new writer process while Redis is down: it would refuse to start.
    std::this_thread::sleep_for(
        std::chrono::milliseconds(random_ms(300, 1500)));
    redis_->start();
    ASSERT_TRUE(redis_->running());
  }
  load.pump(random_ms(window / 8, window / 4));
  // No process was restarted: the ones that lived through the outages must
  // finish the work themselves. Redis down or still loading its AOF is an
  // outage, never a refusal.
  auto survivors =
      settle_and_stop_survivors(load, *relays, *consumer, "Redis came back");
  EXPECT_THAT(survivors.consumers, testing::HasSubstr("Redis trouble"))
      << "the consumers never saw the outage: " << survivors.consumers;

  auto check = finish("FaultKillRedis", kills);
  EXPECT_GT(check.figures.orders, 0);
  EXPECT_EQ(check.figures.dead_lettered, 0);
}

} // namespace
} // namespace outbox::test
