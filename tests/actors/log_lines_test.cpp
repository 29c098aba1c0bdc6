#include "actors/coordinator.hpp"
#include "actors/relay.hpp"

#include "pipeline_fixture.hpp"
#include "storage/types.hpp"

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
using outbox::test::pipeline_fixture;
using outbox::test::seed_where;
using slot_role = actors::worker_slot::role;

namespace {

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

bool starts_with(const std::string& text, const std::string& prefix) {
  return text.rfind(prefix, 0) == 0;
}

config::crash_settings crash_after_claim() {
  config::crash_settings crash;
  crash.relay_after_claim = 1;
  return crash;
}

config::crash_settings pause_past_lease() {
  config::crash_settings crash;
  crash.relay_pause = 1;
  return crash;
}

using ActorLogLinesRelay = pipeline_fixture;
using ActorLogLinesConsumer = pipeline_fixture;
using ActorLogLinesCoordinator = pipeline_fixture;

TEST_F(ActorLogLinesRelay, FaultFreeBatchesLogNothingAtInfo) {
  std::vector<std::string> ids;
  for (auto sku : {"apple", "pear", "plum"})
    ids.push_back(place_order(sku, 1).event_id);
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
    EXPECT_EQ(status_of(id), storage::status::published);
  EXPECT_TRUE(log.lines().empty()) << log.dump();
}

TEST_F(ActorLogLinesRelay, BatchesAreDebugLines) {
  auto order = place_order("apple", 1);
  captured_log log{spdlog::level::debug};
  spawn_relay(relay_config("relay-a"));
  run();
  auto lines = log.matching({"relay relay-a: published 1 rows, acked 1"});
  ASSERT_EQ(lines.size(), 1u) << log.dump();
  EXPECT_TRUE(starts_with(lines[0], "debug ")) << lines[0];
}

TEST_F(ActorLogLinesRelay, TakeoverNamesTheRowsAndThePreviousOwner) {
  auto first = place_order("apple", 1);
  auto second = place_order("pear", 1);
  captured_log log{spdlog::level::info};
  spawn_relay(relay_config("relay-a", crash_after_claim()));
  run();
  spawn_relay(relay_config("relay-b"));
  advance(policy_.ttl + 200);
  ASSERT_EQ(status_of(first.event_id), storage::status::published);

  auto crashes = log.matching({"relay relay-a: injected crash (after claim)"});
  ASSERT_EQ(crashes.size(), 1u) << log.dump();
  EXPECT_TRUE(starts_with(crashes[0], "info ")) << crashes[0];
  auto takeovers = log.matching(
      {"relay relay-b: took over 2 rows of expired leases", "relay-a (2)",
       first.event_id + " (" + first.aggregate_id + " #1)", second.event_id});
  ASSERT_EQ(takeovers.size(), 1u) << log.dump();
  EXPECT_TRUE(starts_with(takeovers[0], "info ")) << takeovers[0];
  EXPECT_EQ(log.lines().size(), 2u) << log.dump();
}

TEST_F(ActorLogLinesRelay, ZombiesRejectedAckIsOneLineNamingItsRows) {
  auto first = place_order("apple", 1);
  auto second = place_order("pear", 1);
  captured_log log{spdlog::level::info};
  spawn_relay(relay_config("relay-a", pause_past_lease()));
  run();
  spawn_relay(relay_config("relay-b"));
  advance(policy_.ttl + 200);
  advance(policy_.ttl / 2);

  auto rejected = log.matching(
      {"relay relay-a: lease lost on 2 rows (taken over), ack rejected",
       first.event_id, second.event_id});
  ASSERT_EQ(rejected.size(), 1u) << log.dump();
  EXPECT_TRUE(starts_with(rejected[0], "info ")) << rejected[0];
  EXPECT_EQ(log.matching({"took over 2 rows", "relay-a (2)"}).size(), 1u)
      << log.dump();
  // The injected pause says when it freezes and when it resumes; beside
  // those, the takeover and the rejected ack are the only lines.
  EXPECT_EQ(log.matching({"relay relay-a: injected pause"}).size(), 1u)
      << log.dump();
  EXPECT_EQ(
      log.matching({"relay relay-a: resumed after the injected pause"}).size(),
      1u)
      << log.dump();
  EXPECT_EQ(log.lines().size(), 4u) << log.dump();
}

TEST_F(ActorLogLinesRelay, RowRefusedUntilFailedGetsOneWarnLine) {
  policy_.max_attempts = 3;
  auto poisoned = place_order("apple", 1);
  broker_->poisoned_aggregates.insert(poisoned.aggregate_id);
  captured_log log{spdlog::level::info};
  spawn_relay(relay_config("relay-a"));
  for (int i = 0;
       i < 20 && status_of(poisoned.event_id) != storage::status::failed; ++i)
    advance(100);
  ASSERT_EQ(status_of(poisoned.event_id), storage::status::failed);

  auto failed =
      log.matching({"relay relay-a: row FAILED", "event " + poisoned.event_id,
                    "aggregate " + poisoned.aggregate_id, "seq 1", "attempts 3",
                    "WRONGTYPE"});
  ASSERT_EQ(failed.size(), 1u) << log.dump();
  EXPECT_TRUE(starts_with(failed[0], "warning ")) << failed[0];
  // The two refusals before it backed the row off, a line each.
  EXPECT_EQ(
      log.matching({"broker refused 1 rows, 1 backed off", poisoned.event_id})
          .size(),
      2u)
      << log.dump();
  EXPECT_EQ(log.lines().size(), 3u) << log.dump();
}

TEST_F(ActorLogLinesRelay, RowGivenUpByAClaimGetsOneWarnLine) {
  policy_.max_attempts = 1;
  auto order = place_order("apple", 1);
  captured_log log{spdlog::level::info};
  spawn_relay(relay_config("relay-a", crash_after_claim()));
  run();
  spawn_relay(relay_config("relay-b"));
  advance(policy_.ttl + 200);
  ASSERT_EQ(status_of(order.event_id), storage::status::failed);

  auto failed = log.matching(
      {"relay relay-b: row FAILED", "event " + order.event_id,
       "aggregate " + order.aggregate_id, "attempts 1", "lease expired"});
  ASSERT_EQ(failed.size(), 1u) << log.dump();
  EXPECT_TRUE(starts_with(failed[0], "warning ")) << failed[0];
}

TEST_F(ActorLogLinesRelay, RedisOutageIsLoggedWhenItBeginsAndWhenItEnds) {
  auto order = place_order("apple", 1);
  broker_->fail_publishes(6, broker::broker_errc::unavailable);
  captured_log log{spdlog::level::info};
  spawn_relay(relay_config("relay-a"));
  for (int i = 0;
       i < 50 && status_of(order.event_id) != storage::status::published; ++i)
    advance(100);
  ASSERT_EQ(status_of(order.event_id), storage::status::published);
  EXPECT_EQ(broker_->publish_calls, 7);

  auto down = log.matching({"relay relay-a: Redis unavailable, releasing 1 "
                            "rows",
                            order.event_id});
  ASSERT_EQ(down.size(), 1u) << "one line per outage, not per retry\n"
                             << log.dump();
  EXPECT_TRUE(starts_with(down[0], "warning ")) << down[0];
  auto back = log.matching(
      {"relay relay-a: Redis reachable again after", "(6 failed publishes)"});
  ASSERT_EQ(back.size(), 1u) << log.dump();
  EXPECT_TRUE(starts_with(back[0], "info ")) << back[0];
  EXPECT_EQ(log.lines().size(), 2u) << log.dump();
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
  auto named = log.matching({"consumer c-1: dead-lettered 2 entries (event "
                             "evt-bad: ",
                             ", event unreadable: entry is not valid JSON)"});
  ASSERT_EQ(named.size(), 1u) << log.dump();
  EXPECT_TRUE(starts_with(named[0], "warning ")) << named[0];
  EXPECT_EQ(log.lines().size(), 1u) << log.dump();
}

TEST_F(ActorLogLinesConsumer, RedisOutageIsLoggedWhenItBeginsAndWhenItEnds) {
  enqueue(broker_->queue, "a", 1);
  broker_->fail_applies = 4;
  captured_log log{spdlog::level::info};
  spawn_consumer(consumer_config("c-1"));
  for (int i = 0; i < 100 && metrics_->applied.load() == 0; ++i)
    advance(100);
  ASSERT_EQ(metrics_->applied.load(), 1);

  auto down = log.matching({"consumer c-1: Redis trouble, retrying in"});
  ASSERT_EQ(down.size(), 1u) << log.dump();
  EXPECT_TRUE(starts_with(down[0], "warning ")) << down[0];
  auto back = log.matching(
      {"consumer c-1: Redis reachable again after", "(4 failed attempts)"});
  ASSERT_EQ(back.size(), 1u) << log.dump();
  EXPECT_TRUE(starts_with(back[0], "info ")) << back[0];
  EXPECT_EQ(log.lines().size(), 2u) << log.dump();
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
  for (int i = 0; i < 20 && !report->arrived; ++i)
    advance(10);
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
  EXPECT_NE(lines[1].find("(no failure)"), std::string::npos) << lines[1];
}

TEST_F(ActorLogLinesCoordinator, RestartIsOneLineWithTheOldAndNewNameAndWhy) {
  place_order("apple", 1);
  auto first = actors::worker_name(prefix_, slot_role::relay, 0, 0);
  auto second = actors::worker_name(prefix_, slot_role::relay, 0, 1);
  auto s = pipeline_settings();
  s.crash.relay_after_claim = 0.5;
  s.crash.seed = seed_where(actors::crash_point::relay_after_claim, 0.5,
                            {{first, {true}}, {second, {false}}});
  captured_log log{spdlog::level::info};
  auto coordinator = spawn_coordinator(coordinator_config(s));
  run();
  ASSERT_EQ(metrics_->relay_restarts.load(), 1);

  auto restarts = log.matching(
      {"coordinator " + prefix_ + ": restarted " + first + " as " + second,
       "injected_crash"});
  ASSERT_EQ(restarts.size(), 1u) << log.dump();
  EXPECT_TRUE(starts_with(restarts[0], "info ")) << restarts[0];
  EXPECT_EQ(log.matching({"relay " + first + ": injected crash"}).size(), 1u)
      << log.dump();
  EXPECT_TRUE(log.matching({"went down"}).empty()) << log.dump();
  request_shutdown(coordinator);
  run();
}

} // namespace
