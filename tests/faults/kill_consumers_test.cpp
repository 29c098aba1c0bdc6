#include "tests/faults/fault_fixture.hpp"

#include <regex>

namespace outbox::test {
namespace {

using FaultKillConsumers = fault_fixture;

/// In-flight entries a starting consumer process put back, from its log
/// line "recovered N in-flight entries of earlier consumers".
std::int64_t recovered_in(const std::string& log) {
  static const std::regex line{"recovered ([0-9]+) in-flight entries"};
  std::int64_t total = 0;
  for (std::sregex_iterator i{log.begin(), log.end(), line}, end; i != end; ++i)
    total += std::stoll((*i)[1].str());
  return total;
}

/// Scenario 2: the consumer process SIGKILLed mid-stream and restarted. Its
/// entries sit in its processing lists (popped, maybe applied, not removed);
/// the next consumer process puts them back at the head of their queues
/// before it pops anything, so they are applied in order, and the inbox
/// absorbs the ones that were already applied: no loss, no double effect.
/// One consumer process at a time: each replacement starts after its
/// predecessor was killed, and consumes once the dead one's consumers' lock
/// has lapsed (a standby beside a live holder is FaultStandbyConsumers).
TEST_F(FaultKillConsumers, SigkilledConsumerProcessesRecoverInFlightEntries) {
  auto relays = start_run(relay_only_flags());
  auto load = waves(300);
  auto consumer = start_run(consumer_only_flags());

  // Kill the consumer process by pid and start the next one (never two at
  // once) for the whole fault window. A batched consumer keeps up with this
  // load and sits idle, with nothing in flight, most of the time: so the
  // load runs a while with no consumer, and the next one is killed a few
  // ms after it starts, while it drains that backlog batch by batch.
  std::int64_t kills = 0;
  std::int64_t recovered = 0;
  auto end = std::chrono::steady_clock::now() + fault_window();
  while (std::chrono::steady_clock::now() < end) {
    auto killed = replace_killed_consumer(consumer, load, random_ms(200, 500));
    recovered += recovered_in(killed.err);
    ++kills;
    load.pump(random_ms(2, 40));
  }
  auto orders = load.finish(120'000);

  stop_gracefully(*relays, "relay process");
  process_result last;
  stop_gracefully(*consumer, "consumer process", &last);
  recovered += recovered_in(last.err);
  drain_and_finish("FaultKillConsumers", kills, orders);
  // Killed mid-stream: some entries were in flight and came back.
  EXPECT_GT(recovered, 0) << kills << " kills recovered nothing";
}

} // namespace
} // namespace outbox::test
