#include "faults/fault_fixture.hpp"

#include <csignal>

namespace outbox::test {
namespace {

using FaultStandbyConsumers = fault_fixture;

/// Scenario 6: two consumer processes for availability. One holds the
/// consumers' lock and consumes, the other waits. The holder freezes
/// (SIGSTOP: a long GC pause, a VM migration) past the lock's ttl with
/// entries in hand; the standby takes over, recovering them. The frozen one
/// wakes up (SIGCONT) believing it still consumes, and the fence stops it
/// before it moves or applies anything. Then the new holder dies (SIGKILL)
/// and the first one takes over again. Nothing lost, nothing applied twice,
/// per-aggregate order kept throughout.
TEST_F(FaultStandbyConsumers, PausedHolderIsFencedAndTheStandbyTakesOver) {
  const std::vector<std::string> consumer_flags{
      "--relays", "0", "--consumers", "2", "--log-level", "info"};
  auto relays = start_run({"--relays", "2", "--consumers", "0"});
  auto first = start_run(consumer_flags);
  ASSERT_TRUE(first->wait_for_stderr("consuming the queues", 10'000));
  auto second = start_run(consumer_flags);
  ASSERT_TRUE(second->wait_for_stderr("standby", 10'000))
      << "a second consumer process must wait, not consume alongside";
  auto load = waves(300, scaled(8));
  load.pump(random_ms(300, 800));

  first->signal(SIGSTOP);
  EXPECT_TRUE(second->wait_for_stderr("consuming the queues", 10'000))
      << "the standby never took over from the frozen holder";
  load.pump(random_ms(300, 800));
  first->signal(SIGCONT);
  EXPECT_TRUE(
      first->wait_for_stderr("another process consumes the queues", 10'000))
      << "the woken holder was not stopped";
  load.pump(random_ms(200, 500));

  second->signal(SIGKILL);
  auto killed = second->wait(10'000);
  EXPECT_EQ(killed.signal, SIGKILL) << killed.out << killed.err;
  auto orders = load.finish(120'000);
  // Only the first process is left to consume: it must take over again.
  EXPECT_TRUE(wait_until_settled(60'000))
      << "nobody consumed after the holder died: " << status().dump();
  stop_gracefully(*relays, "relay process");
  stop_gracefully(*first, "first consumer process");
  drain();

  auto check = finish("FaultStandbyConsumers", 2);
  EXPECT_EQ(check.figures.orders, orders);
  EXPECT_EQ(check.figures.dead_lettered, 0);
}

} // namespace
} // namespace outbox::test
