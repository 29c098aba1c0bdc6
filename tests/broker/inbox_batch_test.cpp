#include "broker/inbox.hpp"

#include "broker/broker_error.hpp"
#include "broker/connection.hpp"
#include "broker/dead_letters.hpp"
#include "tests/broker/inbox_fixture.hpp"

#include <nlohmann/json.hpp>

// Many entries in one script call: each gets its own outcome, in order, and
// the calls are split at the caps on entries and bytes.

using namespace outbox::broker;
using json = nlohmann::json;
using outcome = applied_entry::outcome;
using BrokerInbox = outbox::test::inbox_fixture;

namespace {

using outcomes = std::vector<outcome>;

outcomes results_of(const std::vector<applied_entry>& applied) {
  outcomes all;
  for (const auto& a : applied)
    all.push_back(a.result);
  return all;
}

std::vector<bool> violations_of(const std::vector<applied_entry>& applied) {
  std::vector<bool> all;
  for (const auto& a : applied)
    all.push_back(a.order_violation);
  return all;
}

std::string with_committed_at(const std::string& entry, std::int64_t at) {
  auto j = json::parse(entry);
  j["committed_at"] = at;
  return j.dump();
}

/// How many EVALSHA calls Redis has run since the last CONFIG RESETSTAT.
long long evalsha_calls(connection& conn) {
  auto r = conn.command({"INFO", "commandstats"});
  auto text = reply_text(*r);
  auto at = text.find("cmdstat_evalsha:calls=");
  if (at == std::string::npos)
    return 0;
  return std::stoll(text.substr(at + 22));
}

} // namespace

TEST_F(BrokerInbox, ApplyBatchAppliesEachEntryInOrderInOneCall) {
  inbox box{conn(), names_};
  conn().command({"CONFIG", "RESETSTAT"});
  auto applied = box.apply_batch({order_placed("e1", "o1", 1, "A", 2),
                                  follow_up("e2", "o1", 2, "OrderPaid"),
                                  order_placed("f1", "o2", 1, "B", 5),
                                  follow_up("e3", "o1", 3, "OrderShipped")});
  EXPECT_EQ(evalsha_calls(conn()), 1);
  EXPECT_EQ(results_of(applied), outcomes(4, outcome::applied));
  EXPECT_EQ(violations_of(applied), std::vector<bool>(4, false));
  EXPECT_EQ(reserved("A"), 2);
  EXPECT_EQ(reserved("B"), 5);
  EXPECT_EQ(hash_integer(names_.aggregate_seq, "o1"), 3);
  EXPECT_EQ(hash_integer(names_.aggregate_seq, "o2"), 1);
  EXPECT_EQ(counter("consumed"), 4);
  EXPECT_EQ(counter("duplicates"), 0);
  auto record = json::parse(hash_field(names_.processed, "e3"));
  EXPECT_EQ(record["event_type"], "OrderShipped");
  EXPECT_EQ(record["seq"], 3);
  EXPECT_TRUE(box.apply_batch({}).empty());
}

TEST_F(BrokerInbox, ApplyBatchCountsARepeatWithinTheBatchAsDuplicate) {
  inbox box{conn(), names_};
  auto e1 = order_placed("e1", "o1", 1, "A", 2);
  auto e2 = follow_up("e2", "o1", 2, "OrderPaid");
  auto applied = box.apply_batch({e1, e1, e2, e1, e2});
  EXPECT_EQ(results_of(applied),
            (outcomes{outcome::applied, outcome::duplicate, outcome::applied,
                      outcome::duplicate, outcome::duplicate}));
  EXPECT_EQ(reserved("A"), 2);
  EXPECT_EQ(counter("consumed"), 2);
  EXPECT_EQ(counter("duplicates"), 3);
  EXPECT_EQ(counter("order_violations"), 0);
  // And against what an earlier call applied.
  applied = box.apply_batch({e2, order_placed("e9", "o9", 1, "A", 1), e1});
  EXPECT_EQ(results_of(applied), (outcomes{outcome::duplicate, outcome::applied,
                                           outcome::duplicate}));
  EXPECT_EQ(reserved("A"), 3);
  EXPECT_EQ(counter("duplicates"), 5);
}

TEST_F(BrokerInbox, ApplyBatchDeadLettersMalformedEntriesInPlace) {
  inbox box{conn(), names_};
  auto no_sku = json::parse(order_placed("e3", "o3", 1, "A", 1));
  no_sku["payload"].erase("sku");
  auto applied =
      box.apply_batch({"not json", order_placed("e1", "o1", 1, "A", 1), "[1]",
                       no_sku.dump(), order_placed("e2", "o2", 1, "A", 1)});
  EXPECT_EQ(results_of(applied),
            (outcomes{outcome::dead_lettered, outcome::applied,
                      outcome::dead_lettered, outcome::dead_lettered,
                      outcome::applied}));
  EXPECT_EQ(applied[0].reason, "entry is not valid JSON");
  EXPECT_EQ(applied[2].reason, "entry must be a JSON object");
  EXPECT_EQ(applied[3].reason, "effect failed: builtin:orders: OrderPlaced: "
                               "payload.sku must be a non-empty string");
  EXPECT_TRUE(applied[1].reason.empty());
  auto dead = list(names_.dead_letter);
  ASSERT_EQ(dead.size(), 3u);
  EXPECT_EQ(json::parse(dead[0])["entry"], "not json");
  EXPECT_EQ(json::parse(dead[1])["entry"], "[1]");
  EXPECT_EQ(json::parse(dead[2])["reason"],
            "effect failed: builtin:orders: OrderPlaced: payload.sku must be "
            "a non-empty string");
  EXPECT_EQ(counter("dead_lettered"), 3);
  EXPECT_EQ(counter("consumed"), 2);
  EXPECT_EQ(hash_field(names_.processed, "e3"), "");
  EXPECT_EQ(reserved("A"), 2);
}

TEST_F(BrokerInbox, ApplyBatchChecksOrderEntryByEntry) {
  inbox box{conn(), names_};
  auto applied = box.apply_batch({follow_up("e2", "o1", 2, "OrderPaid"),
                                  order_placed("e1", "o1", 1, "A", 1),
                                  follow_up("e3", "o1", 3, "OrderShipped"),
                                  order_placed("f1", "o2", 1, "A", 1),
                                  follow_up("f3", "o2", 3, "OrderShipped"),
                                  follow_up("f2", "o2", 2, "OrderPaid")});
  EXPECT_EQ(results_of(applied), outcomes(6, outcome::applied));
  EXPECT_EQ(violations_of(applied),
            (std::vector<bool>{true, true, false, false, true, true}));
  EXPECT_EQ(counter("order_violations"), 4);
  EXPECT_EQ(hash_integer(names_.aggregate_seq, "o1"), 3);
  EXPECT_EQ(hash_integer(names_.aggregate_seq, "o2"), 3);
}

TEST_F(BrokerInbox, ApplyBatchHandlesAMixedBatch) {
  inbox box{conn(), names_};
  ASSERT_EQ(box.apply(order_placed("old", "o0", 1, "A", 1)).result,
            outcome::applied);
  auto applied = box.apply_batch({order_placed("old", "o0", 1, "A", 1), "{}",
                                  order_placed("e1", "o1", 1, "B", 4),
                                  follow_up("e3", "o1", 3, "OrderPaid"),
                                  order_placed("e1", "o1", 1, "B", 4),
                                  follow_up("e2", "o1", 2, "OrderPaid")});
  EXPECT_EQ(
      results_of(applied),
      (outcomes{outcome::duplicate, outcome::dead_lettered, outcome::applied,
                outcome::applied, outcome::duplicate, outcome::applied}));
  EXPECT_EQ(violations_of(applied),
            (std::vector<bool>{false, false, false, true, false, true}));
  EXPECT_EQ(applied[1].reason,
            "event_id must be a non-empty string of at most 128 bytes");
  EXPECT_EQ(reserved("A"), 1);
  EXPECT_EQ(reserved("B"), 4);
  EXPECT_EQ(counter("consumed"), 4);
  EXPECT_EQ(counter("duplicates"), 2);
  EXPECT_EQ(counter("dead_lettered"), 1);
  EXPECT_EQ(counter("order_violations"), 2);
}

TEST_F(BrokerInbox, ApplyBatchReturnsEachEntrysCommittedAt) {
  inbox box{conn(), names_};
  auto e1 =
      with_committed_at(order_placed("e1", "o1", 1, "A", 1), 1700000000123);
  auto applied =
      box.apply_batch({e1, follow_up("e2", "o1", 2, "OrderPaid"), e1,
                       with_committed_at(follow_up("e3", "o1", 3, "OrderPaid"),
                                         123456789012345)});
  ASSERT_EQ(applied.size(), 4u);
  EXPECT_EQ(applied[0].committed_at, 1700000000123);
  EXPECT_EQ(applied[1].committed_at, 0) << "none in the entry";
  EXPECT_EQ(applied[2].result, outcome::duplicate);
  EXPECT_EQ(applied[2].committed_at, 1700000000123);
  EXPECT_EQ(applied[3].committed_at, 123456789012345);
  EXPECT_EQ(box.apply(e1).committed_at, 1700000000123);
}

TEST_F(BrokerInbox, ApplyBatchSplitsCallsAtTheEntryCap) {
  inbox box{conn(), names_};
  std::vector<std::string> entries;
  auto total = inbox::max_call_entries + 3;
  for (std::size_t i = 0; i < total; ++i)
    entries.push_back(order_placed("e" + std::to_string(i),
                                   "o" + std::to_string(i), 1, "A", 1));
  conn().command({"CONFIG", "RESETSTAT"});
  auto applied = box.apply_batch(entries);
  EXPECT_EQ(evalsha_calls(conn()), 2);
  EXPECT_EQ(results_of(applied), outcomes(total, outcome::applied));
  EXPECT_EQ(reserved("A"), static_cast<long long>(total));
  EXPECT_EQ(counter("consumed"), static_cast<long long>(total));
}

TEST_F(BrokerInbox, ApplyBatchSplitsCallsAtTheByteCap) {
  inbox box{conn(), names_};
  // Entries of just over 1 MiB (broker.max_entry_bytes): 15 fit in one call.
  std::vector<std::string> entries;
  for (int i = 0; i < 17; ++i) {
    auto j = json::parse(
        follow_up("e" + std::to_string(i), "o1", i + 1, "OrderPaid"));
    j["payload"]["note"] = std::string(1 << 20, 'x');
    entries.push_back(j.dump());
  }
  conn().command({"CONFIG", "RESETSTAT"});
  auto applied = box.apply_batch(entries);
  EXPECT_EQ(evalsha_calls(conn()), 2);
  EXPECT_EQ(results_of(applied), outcomes(17, outcome::applied));
  EXPECT_EQ(violations_of(applied), std::vector<bool>(17, false));
  EXPECT_EQ(hash_integer(names_.aggregate_seq, "o1"), 17);
}

TEST_F(BrokerInbox, PoisonEffectInABatchStopsOnlyThatEntry) {
  inbox box{conn(), names_};
  conn().command({"HSET", names_.reserved, "B", "not a number"});
  std::vector<std::string> batch = {
      order_placed("e1", "o1", 1, "A", 1), "garbage",
      order_placed("e2", "o2", 1, "B", 1), order_placed("e3", "o3", 1, "A", 1),
      follow_up("e4", "o2", 2, "OrderPaid")};
  auto applied = box.apply_batch(batch);
  EXPECT_EQ(
      results_of(applied),
      (outcomes{outcome::applied, outcome::dead_lettered,
                outcome::dead_lettered, outcome::applied, outcome::applied}));
  EXPECT_EQ(violations_of(applied), std::vector<bool>(5, false));
  EXPECT_EQ(hash_field(names_.processed, "e2"), "");
  EXPECT_EQ(reserved("A"), 2);
  EXPECT_EQ(counter("consumed"), 3);
  EXPECT_EQ(counter("dead_lettered"), 2);
  // Redelivered as a whole (a recovery after the consumer died before
  // removing it), even once fixed: every entry is absorbed, the garbage and
  // the poisoned one included, which keep their one record each.
  conn().command({"HDEL", names_.reserved, "B"});
  applied = box.apply_batch(batch);
  EXPECT_EQ(results_of(applied), outcomes(5, outcome::duplicate));
  EXPECT_EQ(counter("dead_lettered"), 2);
  EXPECT_EQ(list(names_.dead_letter).size(), 2u);
  // Replayed, the poisoned entry applies, late but not out of order.
  ASSERT_EQ(
      replay_dead_letters(conn(), names_, {{"e2"}, false}).replayed.size(), 1u);
  applied = box.apply_batch({batch[2]});
  EXPECT_EQ(results_of(applied), outcomes{outcome::applied});
  EXPECT_EQ(reserved("B"), 1);
  EXPECT_EQ(counter("consumed"), 4);
  EXPECT_EQ(counter("order_violations"), 0);
}

TEST_F(BrokerInbox, WrongTypedKeyRejectsABatchBeforeAnyWrite) {
  inbox box{conn(), names_};
  conn().command({"SET", names_.dead_letter, "oops"});
  EXPECT_THROW(
      box.apply_batch({"garbage", order_placed("e1", "o1", 1, "A", 1)}),
      broker_error);
  EXPECT_EQ(hash_field(names_.processed, "e1"), "");
  EXPECT_EQ(reserved("A"), 0);
  EXPECT_EQ(counter("dead_lettered"), 0);
}
