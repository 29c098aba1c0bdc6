#include "tests/faults/fault_fixture.hpp"

#include "broker/connection.hpp"
#include "broker/keys.hpp"
#include "config/settings.hpp"
#include "support/pipeline_keys.hpp"
#include "support/redis_lists.hpp"

#include <gmock/gmock.h>
#include <hiredis/hiredis.h>

#include <chrono>
#include <csignal>
#include <cstddef>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace outbox::test {
namespace {

using FaultFrozenRecovery = fault_fixture;

/// Entries planted per processing list: what a consumer process killed in
/// the middle of its batches leaves in flight.
constexpr std::size_t planted_per_list = 8;

class redis_view {
public:
  explicit redis_view(const broker::connection_options& options)
      : conn_(options) {}

  std::vector<std::string> list(const std::string& key) {
    return list_items(conn_, key);
  }

  long long length(const std::string& key) {
    return conn_.command({"LLEN", key})->integer;
  }

  std::string text(const std::string& key) {
    auto r = conn_.command({"GET", key});
    return r->type == REDIS_REPLY_STRING ? broker::reply_text(*r) : "";
  }

  /// Moves the queue's head to the processing list's tail, as a pop does.
  void move_head(const std::string& queue, const std::string& processing) {
    conn_.command({"LMOVE", queue, processing, "LEFT", "RIGHT"});
  }

private:
  broker::connection conn_;
};

/// Waits (polling every 20 ms, bounded) until every queue holds `entries`.
bool queues_hold(redis_view& redis, const broker::keys& names,
                 std::size_t entries, int timeout_ms) {
  auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    bool full = true;
    for (std::size_t i = 0; i < names.partitions; ++i)
      full = full && redis.length(names.partition(i)) >=
                         static_cast<long long>(entries);
    if (full)
      return true;
    if (std::chrono::steady_clock::now() >= deadline)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

/// Scenario 7: a process taking over the consumers' lock is frozen in the
/// middle of its recovery. Consumers of a dead process left a processing
/// list on every queue. The new holder puts the first one back, then
/// freezes (crash.recovery_pause_ms marks the moment, SIGSTOP holds it) past
/// the lock's ttl. A third process takes the lock over, recovers the other
/// lists and consumes. Woken (SIGCONT), the frozen one goes on with its
/// recovery: the fence refuses its next list, so it moves nothing more,
/// never starts its consumers and applies nothing; it waits as a standby.
TEST_F(FaultFrozenRecovery, FrozenMidRecoveryMovesNothingOnceWoken) {
  broker::keys names = default_pipeline_keys();
  redis_view redis{redis_->connection_options()};
  auto relays = start_run({"--relays", "2", "--consumers", "0"});
  auto first_wave = start_writer(300, 100);
  auto written = first_wave->wait(120'000);
  ASSERT_EQ(written.exit_code, 0) << written.out << written.err;
  std::int64_t orders = 300;
  ASSERT_TRUE(queues_hold(redis, names, planted_per_list, 30'000))
      << "the relays did not publish the first wave: " << status().dump();

  // The dead process's in-flight entries, one list per queue, sorted as
  // recovery takes them.
  std::map<std::string, std::vector<std::string>> planted;
  for (std::size_t i = 0; i < names.partitions; ++i) {
    auto queue = names.partition(i);
    auto list = names.processing_for(queue, "consumer-gone-1-" +
                                                std::to_string(i) + "-0");
    for (std::size_t n = 0; n < planted_per_list; ++n)
      redis.move_head(queue, list);
    planted[list] = redis.list(list);
    ASSERT_EQ(planted[list].size(), planted_per_list);
  }

  const std::vector<std::string> consumer_flags{
      "--relays", "0", "--consumers", "2", "--log-level", "info"};
  auto frozen_flags = consumer_flags;
  // A window in which to stop it, far past the lock's ttl (500 ms).
  frozen_flags.insert(frozen_flags.end(),
                      {"--crash-recovery-pause-ms", "3000"});
  auto frozen = start_run(frozen_flags);
  ASSERT_TRUE(frozen->wait_for_stderr("injected pause", 30'000))
      << "the new holder never paused in its recovery";
  frozen->signal(SIGSTOP);
  // Frozen after its first list, its lock running out: the rest is
  // untouched.
  auto list = planted.begin();
  EXPECT_TRUE(redis.list(list->first).empty()) << "the first list went back";
  std::size_t left_behind = 0;
  for (++list; list != planted.end(); ++list) {
    EXPECT_EQ(redis.list(list->first), list->second) << list->first;
    left_behind += list->second.size();
  }

  auto successor = start_run(consumer_flags);
  EXPECT_TRUE(successor->wait_for_stderr(
      "recovered " + std::to_string(left_behind) + " in-flight entries",
      10'000))
      << "the successor did not recover the lists left behind";
  ASSERT_TRUE(successor->wait_for_stderr("consuming the queues", 10'000));
  auto holder = redis.text(names.consumer_lock());
  // <host>-<pid>.<start>@<ms>#<n> (cli::process_name).
  EXPECT_NE(holder.find("-" + std::to_string(successor->pid()) + "."),
            std::string::npos)
      << holder;
  for (const auto& [name, entries] : planted)
    EXPECT_TRUE(redis.list(name).empty()) << name;
  auto load = waves(300, scaled(4));
  load.pump(random_ms(300, 800));

  frozen->signal(SIGCONT);
  EXPECT_TRUE(frozen->wait_for_stderr("the fence refused recovering", 10'000))
      << "the woken process went on with its recovery unchecked";
  EXPECT_EQ(redis.text(names.consumer_lock()), holder)
      << "the successor keeps the lock";
  load.pump(random_ms(300, 800));
  orders += load.finish(120'000);
  EXPECT_TRUE(wait_until_settled(60'000)) << status().dump();

  process_result woken;
  auto woken_report = stop_gracefully(*frozen, "woken process", &woken);
  EXPECT_GE(woken_report.value("fenced_moves_refused", 0), 1)
      << woken_report.dump();
  EXPECT_EQ(woken_report.value("recovered_entries", -1),
            static_cast<int>(planted_per_list))
      << "it moved only the list it had before the freeze";
  EXPECT_EQ(woken_report.value("applied_here", -1), 0) << woken_report.dump();
  EXPECT_THAT(woken.err,
              testing::Not(testing::HasSubstr("consuming the queues")))
      << "its consumers never started: " << woken.err;
  auto successor_report = stop_gracefully(*successor, "successor process");
  EXPECT_EQ(successor_report.value("recovered_entries", -1),
            static_cast<int>(left_behind))
      << successor_report.dump();
  EXPECT_EQ(successor_report.value("fenced_moves_refused", -1), 0);
  stop_gracefully(*relays, "relay process");
  drain_and_finish("FaultFrozenRecovery", 1, orders);
}

} // namespace
} // namespace outbox::test
