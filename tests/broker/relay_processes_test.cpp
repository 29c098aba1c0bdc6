#include "broker/relay_processes.hpp"

#include "broker/relay_presence.hpp"
#include "broker/server_time.hpp"

#include "tests/broker/inbox_fixture.hpp"

#include <string>
#include <vector>

// The relay processes' heartbeats on a private Redis: running with their
// relay count and since when, stopped when they say so, silent when their
// note ran out; notes a day old dropped; a key nobody can use never fails
// the heartbeat.

namespace outbox::test {
namespace {

class BrokerRelayProcesses : public inbox_fixture {
protected:
  broker::relay_presence presence() {
    return {conn(), names_.relay_processes()};
  }

  std::vector<broker::relay_process> processes() {
    return broker::read_relay_processes(conn(), names_);
  }

  /// A note as a process would have left it, times relative to Redis's.
  void note_by_hand(const std::string& process, const std::string& state,
                    int relays, std::int64_t since_ago, std::int64_t seen_ago,
                    std::int64_t until_from_now) {
    auto now = broker::server_time_ms(conn());
    conn().command({"HSET", names_.relay_processes(), process,
                    state + " " + std::to_string(relays) + " " +
                        std::to_string(now - since_ago) + " " +
                        std::to_string(now - seen_ago) + " " +
                        std::to_string(now + until_from_now)});
  }
};

TEST_F(BrokerRelayProcesses, RunningThenStopped) {
  auto p = presence();
  p.note("host-1@10", 3, 60'000);
  auto found = processes();
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].process, "host-1@10");
  EXPECT_EQ(found[0].state, "running");
  EXPECT_EQ(found[0].relays, 3);
  EXPECT_LT(found[0].seen_ago_ms, 10'000);

  // "since" stays while it runs, whatever its relay count.
  note_by_hand("host-1@10", "running", 3, 500'000, 1'000, 59'000);
  p.note("host-1@10", 2, 60'000);
  found = processes();
  EXPECT_GE(found[0].for_ms, 500'000);
  EXPECT_EQ(found[0].relays, 2);

  p.stopped("host-1@10");
  found = processes();
  ASSERT_EQ(found.size(), 1u) << "kept, to name it";
  EXPECT_EQ(found[0].state, "stopped");
  EXPECT_EQ(found[0].relays, 0);
  EXPECT_LT(found[0].for_ms, 10'000) << "stopped since now";
}

TEST_F(BrokerRelayProcesses, ANoteThatRanOutIsSilentAndADayOldOneGoes) {
  note_by_hand("killed@1", "running", 4, 90'000, 30'000, -20'000);
  note_by_hand("ancient@2", "stopped", 0, 200'000'000,
               broker::relay_note_kept_ms + 1'000, -100'000'000);
  note_by_hand("busy@3", "running", 1, 5'000, 100, 9'900);
  auto found = processes();
  ASSERT_EQ(found.size(), 3u);
  EXPECT_EQ(found[0].process, "busy@3") << "running first";
  EXPECT_EQ(found[1].process, "killed@1") << "then the last seen";
  EXPECT_EQ(found[1].state, "silent");
  EXPECT_EQ(found[1].relays, 4) << "what it ran when last seen";
  EXPECT_GE(found[1].for_ms, 30'000) << "silent since it was last seen";

  // The next note of anyone drops the one not seen for a day.
  presence().note("busy@3", 1, 10'000);
  found = processes();
  ASSERT_EQ(found.size(), 2u);
  for (const auto& p : found)
    EXPECT_NE(p.process, "ancient@2");
}

TEST_F(BrokerRelayProcesses, AKeyOfAnotherTypeOrAMalformedNoteReadsAsNone) {
  conn().command({"HSET", names_.relay_processes(), "odd@1", "what is this"});
  EXPECT_TRUE(processes().empty());
  conn().command({"DEL", names_.relay_processes()});
  conn().command({"SET", names_.relay_processes(), "a string"});
  EXPECT_NO_THROW(presence().note("host-1@10", 1, 10'000));
  EXPECT_TRUE(processes().empty());
}

} // namespace
} // namespace outbox::test
