#include "actors/lock_token.hpp"
#include "broker/broker_error.hpp"
#include "broker/connection.hpp"
#include "broker/consumer_lock.hpp"
#include "broker/fence.hpp"
#include "broker/reliable_queue.hpp"
#include "support/sentinel_group.hpp"

#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <chrono>
#include <functional>
#include <string>
#include <thread>

// The consumers' lock across a failover that loses its last write: the new
// master has never seen the lock, and yet no acquisition there can get the
// token the old holder's consumers still carry (actors/lock_token.hpp), so
// their fence refuses them on the new master.

namespace outbox::test {
namespace {

const std::string failover_lock_key = "outbox-test.consumer.lock";

/// `call`, retried while it meets an outage (the connection's master died
/// and the sentinels have not promoted another yet), for at most 30 s.
template <class Call>
auto through_failover(Call call) {
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  for (;;) {
    try {
      return call();
    } catch (const broker::broker_error& e) {
      if (e.code() != broker::broker_errc::unavailable ||
          std::chrono::steady_clock::now() > until)
        throw;
    }
    // The promotion happens in the sentinels, on their timers: nothing of
    // ours to wait on.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

/// Expects a pop under `token`'s fence to be refused, naming `holder`.
void expect_pop_fenced(broker::connection& conn, const std::string& token,
                       const std::string& holder) {
  broker::reliable_queue fenced{conn, broker::fence{failover_lock_key, token}};
  try {
    through_failover([&] {
      return fenced.pop_batch("outbox-test.q", "outbox-test.q.processing", 10,
                              1 << 20);
    });
    ADD_FAILURE() << "a pop under " << token << " was not fenced";
  } catch (const broker::broker_error& e) {
    EXPECT_EQ(e.code(), broker::broker_errc::fenced) << e.what();
    EXPECT_NE(std::string{e.what()}.find(holder), std::string::npos)
        << e.what();
  }
}

TEST(BrokerSentinelLock, ALockLostInAFailoverIsNeverRetakenUnderItsToken) {
  sentinel_group group;
  // The replica stops copying the master (the sentinels still count it a
  // replica for the seconds this takes): what the master takes from now on
  // is what the failover loses, as an asynchronous replica that lagged.
  // A connection of its own per command: a promotion closes clients'.
  auto replica = [&] {
    return broker::connection{group.first_replica().connection_options()};
  };
  replica().command({"REPLICAOF", "NO", "ONE"});

  broker::connection old_holder{group.connection_options()};
  broker::consumer_lock old_lock{old_holder, failover_lock_key};
  const std::string process_a = "host-a-1@1000";
  auto token_a = actors::acquisition_token(process_a, 1);
  ASSERT_EQ(old_lock.acquire(token_a, 60'000), token_a);

  group.first_master().kill();
  group.wait_until_master(group.first_replica().endpoint());
  auto on_new_master = replica().command({"GET", failover_lock_key});
  ASSERT_EQ(on_new_master->type, REDIS_REPLY_NIL)
      << "the failover kept the lock: nothing was lost to test";
  replica().command({"RPUSH", "outbox-test.q", "e1"});

  // The old holder, following the sentinels, finds the lock gone: it may
  // not renew it, and its consumers' fence refuses them there.
  EXPECT_EQ(through_failover([&] { return old_lock.renew(token_a, 60'000); }),
            "");
  expect_pop_fenced(old_holder, token_a, "nobody");

  // Taken again, by the same process or another, under a token of its own:
  // the old consumers stay fenced.
  auto token_a2 = actors::acquisition_token(process_a, 2);
  broker::connection standby{group.connection_options()};
  broker::consumer_lock standby_lock{standby, failover_lock_key};
  auto token_b = actors::acquisition_token("host-b-2@2000", 1);
  EXPECT_NE(token_a2, token_a);
  EXPECT_NE(token_b, token_a);
  ASSERT_EQ(standby_lock.acquire(token_b, 60'000), token_b);
  expect_pop_fenced(old_holder, token_a, token_b);
  EXPECT_EQ(old_lock.acquire(token_a2, 60'000), token_b)
      << "a second holder while the first holds it";
  auto queued = replica().command({"LLEN", "outbox-test.q"});
  EXPECT_EQ(queued->integer, 1) << "a fenced pop moved an entry";
}

} // namespace
} // namespace outbox::test
