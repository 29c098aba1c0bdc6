#include "broker/consumer_processes.hpp"

#include "broker/consumer_lock.hpp"
#include "broker/server_time.hpp"

#include "tests/broker/inbox_fixture.hpp"

#include <hiredis/hiredis.h>

#include <string>
#include <vector>

// The consumer processes' notes beside the consumers' lock on a private
// Redis: who consumes, who stands by, since when; stale notes dropped; a
// hash nobody can write never costs the lock.

namespace outbox::test {
namespace {

class BrokerConsumerProcesses : public inbox_fixture {
protected:
  broker::consumer_lock lock() {
    return {conn(), names_.consumer_lock(), names_.consumer_processes()};
  }

  std::vector<broker::consumer_process> processes() {
    return broker::read_consumer_processes(conn(), names_);
  }
};

TEST_F(BrokerConsumerProcesses, NotesTheHolderAndTheStandbys) {
  auto a = lock();
  auto b = lock();
  ASSERT_EQ(a.acquire("host-1@10#1", 60'000), "host-1@10#1");
  ASSERT_EQ(b.acquire("host-2@20#1", 60'000), "host-1@10#1");
  auto found = processes();
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].process, "host-1@10");
  EXPECT_EQ(found[0].role, "consuming");
  EXPECT_EQ(found[1].process, "host-2@20");
  EXPECT_EQ(found[1].role, "standby");
  EXPECT_GT(found[1].expires_in_ms, 50'000);

  // The standby keeps its "since" while it waits; taking the lock over
  // starts a new one.
  conn().command({"HSET", names_.consumer_processes(), "host-2@20",
                  "standby 1000 99999999999999"});
  b.acquire("host-2@20#1", 60'000);
  EXPECT_GT(processes()[1].for_ms, 1'000'000) << "kept its first note's time";
  a.release("host-1@10#1");
  ASSERT_EQ(b.acquire("host-2@20#1", 60'000), "host-2@20#1");
  found = processes();
  ASSERT_EQ(found.size(), 1u) << "a release drops the note";
  EXPECT_EQ(found[0].role, "consuming");
  EXPECT_LT(found[0].for_ms, 10'000) << "consuming since the takeover";
}

TEST_F(BrokerConsumerProcesses, DropsNotesNotRenewed) {
  auto a = lock();
  conn().command(
      {"HSET", names_.consumer_processes(), "gone@1", "standby 1000 2000"});
  conn().command(
      {"HSET", names_.consumer_processes(), "garbage@1", "not a note"});
  EXPECT_EQ(processes().size(), 0u) << "expired and unreadable notes hidden";
  a.acquire("host-1@10#1", 60'000);
  auto all = conn().command({"HKEYS", names_.consumer_processes()});
  ASSERT_EQ(all->elements, 1u) << "the next renewal deletes them";
  EXPECT_EQ(broker::reply_text(*all->element[0]), "host-1@10");
}

TEST_F(BrokerConsumerProcesses, AKeyOfAnotherTypeNeverCostsTheLock) {
  conn().command({"SET", names_.consumer_processes(), "planted"});
  auto a = lock();
  EXPECT_EQ(a.acquire("host-1@10#1", 60'000), "host-1@10#1");
  EXPECT_EQ(a.renew("host-1@10#1", 60'000), "host-1@10#1");
  EXPECT_TRUE(processes().empty());
  a.release("host-1@10#1");
  EXPECT_EQ(
      broker::reply_text(*conn().command({"GET", names_.consumer_processes()})),
      "planted");
}

TEST_F(BrokerConsumerProcesses, AHeartbeatNotRenewedForHalfItsLifeIsStale) {
  auto a = lock();
  ASSERT_EQ(a.acquire("host-1@10#1", 60'000), "host-1@10#1");
  auto fresh = processes();
  ASSERT_EQ(fresh.size(), 1u);
  ASSERT_TRUE(fresh[0].seen_ago_ms.has_value());
  EXPECT_LT(*fresh[0].seen_ago_ms, 10'000);
  EXPECT_FALSE(fresh[0].stale());

  // Seen 40 s ago, its note holds 20 s more: it stopped renewing.
  auto now = broker::server_time_ms(conn());
  conn().command({"HSET", names_.consumer_processes(), "host-1@10",
                  "consuming " + std::to_string(now - 100'000) + " " +
                      std::to_string(now + 20'000) + " " +
                      std::to_string(now - 40'000) + " " +
                      std::to_string(now + 20'000)});
  auto stale = processes();
  ASSERT_EQ(stale.size(), 1u);
  EXPECT_GE(*stale[0].seen_ago_ms, 40'000);
  EXPECT_TRUE(stale[0].stale());

  // An earlier version's note says nothing of when it was seen.
  conn().command({"HSET", names_.consumer_processes(), "host-1@10",
                  "consuming " + std::to_string(now - 100'000) + " " +
                      std::to_string(now + 20'000)});
  auto old = processes();
  ASSERT_EQ(old.size(), 1u);
  EXPECT_FALSE(old[0].seen_ago_ms.has_value());
  EXPECT_FALSE(old[0].stale());
  EXPECT_GT(old[0].expires_in_ms, 10'000);
}

} // namespace
} // namespace outbox::test
