#include "tests/faults/fault_fixture.hpp"

#include <csignal>

namespace outbox::test {
namespace {

using FaultStandbyConsumers = fault_fixture;

/// Scenario 6: two consumer processes for availability. One holds the
/// consumers' lock and consumes, the other waits. The holder freezes
/// (SIGSTOP: a long GC pause, a VM migration) past the lock's ttl with
/// entries in hand; the standby takes over, recovering them, and consumes.
/// Then the new holder dies (SIGKILL) with entries of its own in flight,
/// and its lock lapses, while the first is still frozen. The first wakes up
/// (SIGCONT) believing it still consumes: the fence refuses its consumers
/// (the lock is not theirs any more), and it must acquire the lock anew,
/// putting the dead holder's entries back first, before consuming again.
/// Nothing lost, nothing applied twice, per-aggregate order kept.
TEST_F(FaultStandbyConsumers, FrozenHolderIsFencedAndTakesOverOnlyAnew) {
  auto relays = start_run(relay_only_flags());
  auto first = start_run(consumer_only_flags());
  ASSERT_TRUE(first->wait_for_stderr("consuming the queues", 10'000));
  auto second = start_run(consumer_only_flags());
  ASSERT_TRUE(second->wait_for_stderr("standby", 10'000))
      << "a second consumer process must wait, not consume alongside";
  auto load = waves(300, scaled(8));
  load.pump(random_ms(300, 800));

  first->signal(SIGSTOP);
  EXPECT_TRUE(second->wait_for_stderr("consuming the queues", 10'000))
      << "the standby never took over from the frozen holder";
  load.pump(random_ms(300, 800));
  kill_hard(*second);
  // Past the ttl (500 ms): the dead holder's lock lapses, its entries stay
  // in its processing lists.
  load.pump(random_ms(700, 1200));

  first->signal(SIGCONT);
  EXPECT_TRUE(first->wait_for_stderr("#2)", 10'000))
      << "the woken process did not acquire the lock anew";
  auto orders = load.finish(120'000);
  EXPECT_TRUE(wait_until_settled(60'000))
      << "the dead holder's entries were not recovered: " << status().dump();
  stop_gracefully(*relays, "relay process");
  process_result woken;
  stop_gracefully(*first, "first consumer process", &woken);
  // Stopped by its coordinator (the lock lapsed) or by the fence, whichever
  // noticed first.
  EXPECT_TRUE(woken.err.find("lock is no longer theirs") != std::string::npos ||
              woken.err.find("another process consumes the queues") !=
                  std::string::npos)
      << "its old consumers were not stopped: " << woken.err;
  drain_and_finish("FaultStandbyConsumers", 2, orders);
}

} // namespace
} // namespace outbox::test
