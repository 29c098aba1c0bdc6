#include "tests/faults/fault_fixture.hpp"

namespace outbox::test {
namespace {

using FaultKillRelays = fault_fixture;

/// Scenario 1: relay processes SIGKILLed at random moments under load. A
/// killed relay leaves leases (and maybe a published but unacknowledged
/// batch) behind; the others take the rows over once the ttl passes. Nothing
/// may be lost, duplicates are absorbed, and per-aggregate order holds.
TEST_F(FaultKillRelays, SigkilledRelayProcessesLoseNothing) {
  auto consumer = start_run({"--relays", "0", "--consumers", "2"});
  std::vector<std::unique_ptr<child_process>> relays;
  for (int i = 0; i < 3; ++i)
    relays.push_back(start_run(relay_only_flags()));
  auto load = waves(300);

  // Kill one relay process every few hundred ms, by pid, and start a new one
  // in its place, for the whole fault window.
  std::int64_t kills = 0;
  auto end = std::chrono::steady_clock::now() + fault_window();
  while (std::chrono::steady_clock::now() < end) {
    load.pump(random_ms(150, 400));
    auto& victim = relays[random_index(relays.size())];
    kill_hard(*victim);
    ++kills;
    victim = start_run(relay_only_flags());
  }
  auto orders = load.finish(120'000);

  // The survivors stop gracefully; fresh processes finish the work.
  for (auto& relay : relays)
    stop_gracefully(*relay, "relay process");
  stop_gracefully(*consumer, "consumer process");
  auto check = drain_and_finish("FaultKillRelays", kills, orders);
  EXPECT_GT(check.figures.outbox_rows, orders); // follow-ups too
}

} // namespace
} // namespace outbox::test
