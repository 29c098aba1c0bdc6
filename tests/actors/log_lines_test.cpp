#include "actors/coordinator.hpp"
#include "actors/outage.hpp"
#include "actors/relay.hpp"

#include "broker/broker_error.hpp"
#include "storage/types.hpp"
#include "tests/actors/pipeline_fixture.hpp"

#include <gmock/gmock.h>
#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

// What the actors log: nothing on the happy path at info, and one line per
// notable event (takeover, lease lost, FAILED row, dead letter, restart,
// Redis outage) naming the rows, entries and actors involved.

using namespace outbox;
using actors::crash_point;
using outbox::test::crash_at;
using outbox::test::pipeline_fixture;
using outbox::test::seed_where;
using slot_role = actors::worker_slot::role;

namespace {

bool starts_with(const std::string& text, const std::string& prefix) {
  return text.rfind(prefix, 0) == 0;
}

/// Points the default logger at a ring buffer for the test's lifetime, then
/// puts the previous one back. Lines read "<level> <message>".
class captured_log {
public:
  explicit captured_log(spdlog::level::level_enum level)
      : previous_(spdlog::default_logger()),
        sink_(std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(1000)) {
    sink_->set_pattern("%l %v");
    auto logger = std::make_shared<spdlog::logger>("log-lines-test", sink_);
    logger->set_level(level);
    spdlog::set_default_logger(logger);
  }
  ~captured_log() { spdlog::set_default_logger(previous_); }
  captured_log(const captured_log&) = delete;
  captured_log& operator=(const captured_log&) = delete;

  std::vector<std::string> lines() const {
    auto lines = sink_->last_formatted();
    for (auto& line : lines)
      while (!line.empty() && (line.back() == '\n' || line.back() == '\r'))
        line.pop_back();
    return lines;
  }

  /// The lines that contain every one of `parts`.
  std::vector<std::string>
  matching(const std::vector<std::string>& parts) const {
    std::vector<std::string> found;
    for (const auto& line : lines())
      if (std::all_of(parts.begin(), parts.end(), [&](const auto& part) {
            return line.find(part) != std::string::npos;
          }))
        found.push_back(line);
    return found;
  }

  /// Whether exactly `count` lines contain every one of `parts` (count
  /// lines in all when there are no parts).
  testing::AssertionResult
  holds(std::size_t count, const std::vector<std::string>& parts = {}) const {
    auto found = matching(parts).size();
    if (found != count)
      return testing::AssertionFailure()
             << found << " matching lines, not " << count << ":\n"
             << dump();
    return testing::AssertionSuccess();
  }

  /// Whether exactly one line contains every one of `parts`, and it was
  /// logged at `level` ("info", "warning", ...).
  testing::AssertionResult
  one_line_at(const std::string& level,
              const std::vector<std::string>& parts) const {
    if (auto one = holds(1, parts); !one)
      return one;
    auto line = matching(parts).front();
    if (!starts_with(line, level + " "))
      return testing::AssertionFailure() << "not at " << level << ": " << line;
    return testing::AssertionSuccess();
  }

  /// Everything captured, one line each, for failure messages.
  std::string dump() const {
    std::string text;
    for (const auto& line : lines())
      text += line + "\n";
    return text.empty() ? "(nothing logged)" : text;
  }

private:
  std::shared_ptr<spdlog::logger> previous_;
  std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> sink_;
};

class relay_log_fixture : public pipeline_fixture {
protected:
  /// relay-a claims the rows and is struck at `point`; relay-b starts and
  /// runs until relay-a's leases have expired and it has taken them over.
  void take_over_after(crash_point point) {
    spawn_relay(relay_config("relay-a", crash_at(point)));
    run();
    spawn_relay(relay_config("relay-b"));
    advance(policy_.ttl + 200);
  }
};

using ActorLogLinesRelay = relay_log_fixture;
using ActorLogLinesConsumer = pipeline_fixture;
using ActorLogLinesCoordinator = pipeline_fixture;

TEST_F(ActorLogLinesRelay, FaultFreeBatchesLogNothingAtInfo) {
  auto ids = place_orders({"apple", "pear", "plum"}, 1);
  ids.push_back(
      append(place_order("fig", 1).aggregate_id, "OrderPaid").event_id);
  captured_log log{spdlog::level::info};
  auto relay = spawn_relay(relay_config("relay-a"));
  run();
  // More commits, nudges and idle polls: still nothing worth a line.
  ids.push_back(place_order("kiwi", 1).event_id);
  nudge(relay);
  advance(500);
  for (const auto& id : ids)
    EXPECT_EQ(status_of(id),
              storage::row_status_text(storage::row_status::published));
  EXPECT_TRUE(log.holds(0));
}

TEST_F(ActorLogLinesRelay, BatchesAreDebugLines) {
  auto order = place_order("apple", 1);
  captured_log log{spdlog::level::debug};
  spawn_relay(relay_config("relay-a"));
  run();
  ASSERT_TRUE(
      log.one_line_at("debug", {"relay relay-a: published 1 rows, acked 1"}));
}

TEST_F(ActorLogLinesRelay, TakeoverNamesTheRowsAndThePreviousOwner) {
  auto first = place_order("apple", 1);
  auto second = place_order("pear", 1);
  captured_log log{spdlog::level::info};
  take_over_after(crash_point::relay_after_claim);
  ASSERT_EQ(status_of(first.event_id),
            storage::row_status_text(storage::row_status::published));

  ASSERT_TRUE(
      log.one_line_at("info", {"relay relay-a: injected crash (after claim)"}));
  ASSERT_TRUE(log.one_line_at(
      "info",
      {"relay relay-b: took over 2 rows of expired leases", "relay-a (2)",
       first.event_id + " (" + first.aggregate_id + " #1 trace ",
       second.event_id}));
  EXPECT_TRUE(log.holds(2));
}

TEST_F(ActorLogLinesRelay, ZombiesRejectedAckIsOneLineNamingItsRows) {
  auto first = place_order("apple", 1);
  auto second = place_order("pear", 1);
  captured_log log{spdlog::level::info};
  take_over_after(crash_point::relay_pause);
  advance(policy_.ttl / 2);

  ASSERT_TRUE(log.one_line_at(
      "info", {"relay relay-a: lease lost on 2 rows (taken over), ack rejected",
               first.event_id, second.event_id}));
  EXPECT_TRUE(log.holds(1, {"took over 2 rows", "relay-a (2)"}));
  // The injected pause says when it freezes and when it resumes; beside
  // those, the takeover and the rejected ack are the only lines.
  EXPECT_TRUE(log.holds(1, {"relay relay-a: injected pause"}));
  EXPECT_TRUE(
      log.holds(1, {"relay relay-a: resumed after the injected pause"}));
  EXPECT_TRUE(log.holds(4));
}

TEST_F(ActorLogLinesRelay, RowRefusedUntilFailedGetsOneWarnLine) {
  policy_.max_attempts = 3;
  auto poisoned = place_order("apple", 1);
  broker_->poisoned_aggregates.insert(poisoned.aggregate_id);
  captured_log log{spdlog::level::info};
  spawn_relay(relay_config("relay-a"));
  ASSERT_EQ(advance_until_status(
                poisoned.event_id,
                storage::row_status_text(storage::row_status::failed), 20),
            storage::row_status_text(storage::row_status::failed));

  ASSERT_TRUE(log.one_line_at("warning", {"relay relay-a: row FAILED",
                                          "event " + poisoned.event_id,
                                          "aggregate " + poisoned.aggregate_id,
                                          "seq 1", "attempts 3", "WRONGTYPE"}));
  // The two refusals before it backed the row off, a line each.
  EXPECT_TRUE(
      log.holds(2, {"broker refused 1 rows, 1 backed off", poisoned.event_id}));
  EXPECT_TRUE(log.holds(3));
}

TEST_F(ActorLogLinesRelay, RowGivenUpByAClaimGetsOneWarnLine) {
  policy_.max_attempts = 1;
  auto order = place_order("apple", 1);
  captured_log log{spdlog::level::info};
  take_over_after(crash_point::relay_after_claim);
  ASSERT_EQ(status_of(order.event_id),
            storage::row_status_text(storage::row_status::failed));

  ASSERT_TRUE(log.one_line_at("warning", {"relay relay-b: row FAILED",
                                          "event " + order.event_id,
                                          "aggregate " + order.aggregate_id,
                                          "attempts 1", "lease expired"}));
}

TEST_F(ActorLogLinesRelay, RedisOutageIsLoggedWhenItBeginsAndWhenItEnds) {
  auto order = place_order("apple", 1);
  broker_->fail_publishes(6, broker::broker_errc::unavailable);
  captured_log log{spdlog::level::info};
  spawn_relay(relay_config("relay-a"));
  ASSERT_EQ(advance_until_status(
                order.event_id,
                storage::row_status_text(storage::row_status::published), 50),
            storage::row_status_text(storage::row_status::published));
  EXPECT_EQ(broker_->publish_calls, 7);

  ASSERT_TRUE(log.one_line_at(
      "warning",
      {"relay relay-a: Redis unavailable, releasing 1 rows", order.event_id}))
      << "one line per outage, not per retry";
  ASSERT_TRUE(
      log.one_line_at("info", {"relay relay-a: Redis reachable again after",
                               "(6 failed publishes)"}));
  EXPECT_TRUE(log.holds(2));
}

TEST_F(ActorLogLinesConsumer, DeadLetterNamesTheEventWhenItCanBeRead) {
  enqueue(broker_->queue, "a", 1);
  broker_->lists[broker_->queue].push_back(
      R"({"event_id":"evt-bad","aggregate_id":"b","seq":0})");
  broker_->lists[broker_->queue].push_back("not json");
  enqueue(broker_->queue, "a", 2);
  captured_log log{spdlog::level::info};
  spawn_consumer(consumer_config("c-1"));
  run();
  EXPECT_EQ(metrics_->applied.load(), 2);

  // One line for the batch, naming both.
  ASSERT_TRUE(log.one_line_at(
      "warning", {"consumer c-1: dead-lettered 2 entries (event evt-bad: ",
                  ", event unreadable: entry is not valid JSON)"}));
  EXPECT_TRUE(log.holds(1));
}

TEST_F(ActorLogLinesConsumer, RedisOutageIsLoggedWhenItBeginsAndWhenItEnds) {
  enqueue(broker_->queue, "a", 1);
  broker_->fail_applies = 4;
  captured_log log{spdlog::level::info};
  spawn_consumer(consumer_config("c-1"));
  advance_until([&] { return metrics_->applied.load() != 0; }, 100);
  ASSERT_EQ(metrics_->applied.load(), 1);

  ASSERT_TRUE(
      log.one_line_at("warning", {"consumer c-1: Redis trouble, retrying in"}));
  ASSERT_TRUE(
      log.one_line_at("info", {"consumer c-1: Redis reachable again after",
                               "(4 failed attempts)"}));
  EXPECT_TRUE(log.holds(2));
}

TEST_F(ActorLogLinesCoordinator, FaultFreeRunLogsOnlyItsStartAndStopAtInfo) {
  place_order("apple", 1);
  append(place_order("plum", 1).aggregate_id, "OrderPaid");
  pipeline_->source = [this] { return snapshot_from_stores(); };
  auto s = pipeline_settings();
  s.run.consumers = 1;
  captured_log log{spdlog::level::info};
  auto coordinator = spawn_coordinator(coordinator_config(s, true));
  auto report = request_report(coordinator);
  advance_until([&] { return report->arrived; }, 20, 10);
  ASSERT_TRUE(report->value) << render(report->error);
  EXPECT_EQ(broker_->consumed, 3);

  auto lines = log.lines();
  ASSERT_EQ(lines.size(), 2u) << log.dump();
  EXPECT_TRUE(starts_with(lines[0], "info coordinator " + prefix_ +
                                        ": started 1 relays, 1 consumers"))
      << lines[0];
  EXPECT_TRUE(
      starts_with(lines[1], "info coordinator " + prefix_ + ": stopped after"))
      << lines[1];
  EXPECT_THAT(lines[1], testing::HasSubstr("(no failure)"));
}

TEST_F(ActorLogLinesCoordinator, RestartIsOneLineWithTheOldAndNewNameAndWhy) {
  place_order("apple", 1);
  auto first = worker(slot_role::relay, 0);
  auto second = worker(slot_role::relay, 1);
  auto s = pipeline_settings();
  s.crash.relay_after_claim = 0.5;
  s.crash.seed = seed_where(actors::crash_point::relay_after_claim, 0.5,
                            {{first, {true}}, {second, {false}}});
  captured_log log{spdlog::level::info};
  auto coordinator = spawn_coordinator(coordinator_config(s));
  run();
  ASSERT_EQ(metrics_->relay_restarts.load(), 1);

  ASSERT_TRUE(log.one_line_at(
      "info",
      {"coordinator " + prefix_ + ": restarted " + first + " as " + second,
       "injected_crash"}));
  EXPECT_TRUE(log.holds(1, {"relay " + first + ": injected crash"}));
  EXPECT_TRUE(log.holds(0, {"went down"}));
  request_shutdown(coordinator);
  run();
}

// A Redis state (a replica, out of memory) is said once per outage, however
// many actors meet it; a refusal answered before the server recovered but
// handled after another actor's write went through is the same outage.
TEST(ActorLogLinesOutage, AServerStateIsSaidOncePerOutageLateRepliesIncluded) {
  captured_log log{spdlog::level::info};
  broker::broker_error replica{broker::broker_errc::unavailable, "READONLY",
                               broker::server_state::read_only, "127.0.0.1:1"};
  actors::announce_server_state(replica);
  actors::announce_server_state(replica);
  EXPECT_TRUE(log.one_line_at(
      "warning", {"Redis at 127.0.0.1:1 is read-only (a replica): waiting"}));

  actors::server_states_cleared();
  actors::announce_server_state(replica);
  EXPECT_TRUE(log.holds(1, {"read-only"})) << "a late reply said it again";

  broker::broker_error full{broker::broker_errc::unavailable, "OOM",
                            broker::server_state::out_of_memory, "127.0.0.1:1"};
  actors::announce_server_state(full);
  EXPECT_TRUE(log.holds(1, {"out of memory"})) << "a new state is said";
  actors::server_states_cleared();
}

} // namespace
