// Dead-lettered entries replayed once their cause is fixed: an event whose
// effect failed (inventory.reserved[kiwi] holds a non-integer, so HINCRBY
// fails) goes to the dead-letter list; the hash is repaired, `outbox
// dead-letters replay` puts the entry back, the consumer applies it once
// (a second copy is absorbed by the dedup as usual) and `outbox verify`
// passes. A malformed entry, which no fix can help, is refused by name.

#include "tests/faults/fault_world.hpp"

#include "broker/keys.hpp"
#include "support/pipeline_keys.hpp"
#include "support/redis_lists.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <hiredis/hiredis.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace outbox::test {
namespace {

using json = nlohmann::json;

class FaultDeadLetterReplay : public fault_world {
protected:
  void SetUp() override {
    write_config();
    names_.partitions = 4; // the default of broker.partitions
    auto r = outbox({"init"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  /// One order (no follow-ups); returns its event.
  json place(const std::string& sku, int qty) {
    auto r =
        outbox({"place-order", "--sku", sku, "--qty", std::to_string(qty)});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out);
  }

  /// Relays publish everything, no consumer.
  void publish_all() {
    auto r = outbox({"run", "--relays", "1", "--consumers", "0",
                     "--until-drained", "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  }

  process_result consume_all() {
    return outbox({"run", "--relays", "0", "--consumers", "1",
                   "--until-drained", "--json"});
  }

  json dead_letters() {
    auto r = outbox({"dead-letters", "--json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out);
  }

  std::vector<std::string> list(const std::string& key) {
    auto conn = redis();
    return list_items(conn, key);
  }

  std::string field(const std::string& hash, const std::string& name) {
    return broker::reply_text(*redis().command({"HGET", hash, name}));
  }

  pipeline_check check() { return check_pipeline(where()); }

  broker::keys names_ = default_pipeline_keys();
};

TEST_F(FaultDeadLetterReplay, AFailedEffectIsReplayedOnceItsCauseIsFixed) {
  place("apple", 2);
  auto kiwi = place("kiwi", 3);
  place("apple", 1);
  auto kiwi_id = kiwi.at("event_id").get<std::string>();
  // After the publish: a relay-only run's report reads the hash too.
  publish_all();
  redis().command({"HSET", names_.reserved, "kiwi", "not-a-number"});

  // The run dead-letters the kiwi event and applies the others.
  auto first = consume_all();
  EXPECT_NE(first.exit_code, 0) << "a PUBLISHED event is not processed";
  auto listed = dead_letters();
  ASSERT_EQ(listed.at("count"), 1) << listed.dump(2);
  auto& record = listed.at("dead_letters").at(0);
  EXPECT_EQ(record.at("event_id"), kiwi_id);
  EXPECT_EQ(record.at("replayable"), true) << record.dump(2);
  EXPECT_EQ(field(names_.reserved, "apple"), "3");

  // Fixed; replayed, and a second copy replayed behind it.
  redis().command({"HDEL", names_.reserved, "kiwi"});
  auto raw = list(names_.dead_letter);
  auto replay = outbox({"dead-letters", "replay", kiwi_id, "--json"});
  ASSERT_EQ(replay.exit_code, 0) << replay.err;
  EXPECT_EQ(json::parse(replay.out).at("count"), 1);
  EXPECT_TRUE(list(names_.dead_letter).empty());
  redis().command({"RPUSH", names_.dead_letter, raw.at(0)});
  ASSERT_EQ(outbox({"dead-letters", "replay", "--all"}).exit_code, 0);
  auto queue = names_.queue_for(kiwi.at("aggregate_id").get<std::string>());
  EXPECT_EQ(list(queue).size(), 2u);

  auto second = consume_all();
  EXPECT_EQ(second.exit_code, 0) << second.out << second.err;
  EXPECT_EQ(field(names_.reserved, "kiwi"), "3") << "applied once";
  EXPECT_EQ(field(names_.counters, "duplicates"), "1");
  EXPECT_EQ(dead_letters().at("count"), 0);
  auto result = check();
  EXPECT_TRUE(result.ok()) << testing::PrintToString(result.violations)
                           << result.verify_output;
}

TEST_F(FaultDeadLetterReplay, AnEventGivenUpOnByDecisionIsAccountedFor) {
  place("apple", 2);
  auto kiwi = place("kiwi", 3);
  auto kiwi_id = kiwi.at("event_id").get<std::string>();
  publish_all();
  redis().command({"HSET", names_.reserved, "kiwi", "not-a-number"});
  auto first = consume_all();
  EXPECT_NE(first.exit_code, 0) << "a PUBLISHED event is not processed";
  redis().command({"HDEL", names_.reserved, "kiwi"});

  // While it waits: verify names it with both remedies, the health check
  // is unhealthy.
  auto waiting = outbox({"verify"});
  EXPECT_EQ(waiting.exit_code, 1) << waiting.out;
  EXPECT_THAT(waiting.out, testing::HasSubstr("failed  dead_letters: 1 "));
  EXPECT_THAT(waiting.out,
              testing::HasSubstr("outbox dead-letters drop EVENT_ID"));
  EXPECT_EQ(outbox({"status", "--check"}).exit_code, 1);

  // Given up on, with a reason: accounted for, not lost, and healthy.
  auto drop = outbox({"dead-letters", "drop", kiwi_id, "--reason",
                      "customer cancelled; refunded by hand"});
  ASSERT_EQ(drop.exit_code, 0) << drop.out << drop.err;
  auto after = outbox({"verify"});
  EXPECT_EQ(after.exit_code, 0) << after.out << after.err;
  EXPECT_THAT(after.out, testing::HasSubstr("1 dropped from the dead-letter "
                                            "list by decision"));
  EXPECT_EQ(outbox({"status", "--check"}).exit_code, 0);

  // Removed by hand instead (no decision): the same event is lost.
  redis().command({"DEL", names_.dead_letter_dropped()});
  auto by_hand = outbox({"verify"});
  EXPECT_EQ(by_hand.exit_code, 1) << by_hand.out;
  EXPECT_THAT(by_hand.out, testing::HasSubstr(kiwi_id));
}

TEST_F(FaultDeadLetterReplay, AnEntryTakenOutOfItsQueueGoesBackAndApplies) {
  // The state a dead-lettered effect leaves, made by hand so it holds
  // whatever the inbox does with failed effects: a published event whose
  // entry sits in the dead-letter list instead of its queue.
  place("apple", 2);
  auto kiwi = place("kiwi", 3);
  place("apple", 1);
  publish_all();
  auto queue = names_.queue_for(kiwi.at("aggregate_id").get<std::string>());
  auto queued = list(queue);
  auto kiwi_id = kiwi.at("event_id").get<std::string>();
  std::string entry;
  for (const auto& e : queued)
    if (e.find(kiwi_id) != std::string::npos)
      entry = e;
  ASSERT_FALSE(entry.empty());
  redis().command({"LREM", queue, "1", entry});
  redis().command({"RPUSH", names_.dead_letter,
                   json{{"reason", "effect failed for " + kiwi_id},
                        {"entry", entry},
                        {"size", entry.size()},
                        {"truncated", false},
                        {"error", "ERR hash value is not an integer"}}
                       .dump()});

  auto first = consume_all();
  EXPECT_NE(first.exit_code, 0) << "a PUBLISHED event is not processed";
  EXPECT_FALSE(check().ok());

  auto replay = outbox({"dead-letters", "replay", kiwi_id});
  ASSERT_EQ(replay.exit_code, 0) << replay.err;
  EXPECT_THAT(replay.out, testing::HasSubstr("replayed 1 entry"));
  EXPECT_EQ(list(queue), std::vector<std::string>{entry});

  auto second = consume_all();
  EXPECT_EQ(second.exit_code, 0) << second.out << second.err;
  EXPECT_EQ(field(names_.reserved, "kiwi"), "3");
  auto result = check();
  EXPECT_TRUE(result.ok()) << testing::PrintToString(result.violations)
                           << result.verify_output;
}

TEST_F(FaultDeadLetterReplay, AMalformedEntryIsRefusedByName) {
  place("apple", 2);
  publish_all();
  // A hand-made producer's entry: an id, but seq 0.
  auto bad = json{{"event_id", "bad-1"},
                  {"aggregate_id", "order-x"},
                  {"seq", 0},
                  {"event_type", "OrderPaid"},
                  {"payload", json::object()}}
                 .dump();
  redis().command({"RPUSH", names_.queue_for("order-x"), bad});
  auto run = consume_all();
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;

  auto listed = dead_letters();
  ASSERT_EQ(listed.at("count"), 1);
  EXPECT_EQ(listed.at("dead_letters").at(0).at("replayable"), false);
  auto replay = outbox({"dead-letters", "replay", "bad-1"});
  EXPECT_EQ(replay.exit_code, 2);
  EXPECT_THAT(replay.err, testing::HasSubstr(
                              "bad-1 (index 0): malformed entry (seq must be"));
  EXPECT_EQ(dead_letters().at("count"), 1);
  EXPECT_TRUE(check().ok());
}

} // namespace
} // namespace outbox::test
