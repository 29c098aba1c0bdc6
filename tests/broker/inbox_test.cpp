#include "broker/inbox.hpp"

#include "broker/broker_error.hpp"
#include "broker/connection.hpp"
#include "broker/entry.hpp"
#include "redis_fixture.hpp"

#include <nlohmann/json.hpp>

using namespace outbox::broker;
using outbox::test::redis_fixture;
using json = nlohmann::json;
using outcome = applied_entry::outcome;

namespace {

std::string order_placed(const std::string& event_id,
                         const std::string& aggregate, std::int64_t seq,
                         const std::string& sku, std::int64_t qty) {
  event_entry e;
  e.event_id = event_id;
  e.aggregate_id = aggregate;
  e.seq = seq;
  e.event_type = "OrderPlaced";
  e.payload = json{{"sku", sku}, {"qty", qty}}.dump();
  e.published_at = 1700000000000;
  return encode(e);
}

std::string follow_up(const std::string& event_id, const std::string& aggregate,
                      std::int64_t seq, const std::string& type) {
  event_entry e;
  e.event_id = event_id;
  e.aggregate_id = aggregate;
  e.seq = seq;
  e.event_type = type;
  e.payload = R"({"note":"follow-up"})";
  return encode(e);
}

class BrokerInbox : public redis_fixture {
protected:
  long long counter(const std::string& name) {
    return hash_integer(names_.counters, name);
  }
  long long reserved(const std::string& sku) {
    return hash_integer(names_.reserved, sku);
  }

  keys names_;
};

} // namespace

TEST_F(BrokerInbox, FirstDeliveryAppliesEffectAndRecordsResult) {
  inbox box{conn(), names_};
  auto result = box.apply(order_placed("e1", "order-1", 1, "A-1", 3));
  EXPECT_EQ(result.result, outcome::applied);
  EXPECT_FALSE(result.order_violation);
  EXPECT_EQ(reserved("A-1"), 3);
  EXPECT_EQ(counter("consumed"), 1);
  EXPECT_EQ(hash_integer(names_.aggregate_seq, "order-1"), 1);
  auto record = json::parse(hash_field(names_.processed, "e1"));
  EXPECT_EQ(record["event_type"], "OrderPlaced");
  EXPECT_EQ(record["aggregate_id"], "order-1");
  EXPECT_EQ(record["seq"], 1);
  EXPECT_EQ(record["sku"], "A-1");
  EXPECT_EQ(record["qty"], 3);
  EXPECT_GT(record["at"].get<std::int64_t>(), 1600000000000);
}

TEST_F(BrokerInbox, RepeatedDeliveryAppliesOnce) {
  inbox box{conn(), names_};
  auto entry = order_placed("e1", "order-1", 1, "A-1", 2);
  EXPECT_EQ(box.apply(entry).result, outcome::applied);
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(box.apply(entry).result, outcome::duplicate);
  EXPECT_EQ(reserved("A-1"), 2);
  EXPECT_EQ(counter("consumed"), 1);
  EXPECT_EQ(counter("duplicates"), 4);
  EXPECT_EQ(counter("order_violations"), 0);
  // Same event_id, republished later (other published_at): still a dup.
  auto later = json::parse(entry);
  later["published_at"] = 1800000000000;
  EXPECT_EQ(box.apply(later.dump()).result, outcome::duplicate);
  EXPECT_EQ(reserved("A-1"), 2);
}

TEST_F(BrokerInbox, FollowUpEventsAdvanceTheAggregate) {
  inbox box{conn(), names_};
  EXPECT_EQ(box.apply(order_placed("e1", "order-1", 1, "A", 1)).result,
            outcome::applied);
  auto paid = box.apply(follow_up("e2", "order-1", 2, "OrderPaid"));
  auto shipped = box.apply(follow_up("e3", "order-1", 3, "OrderShipped"));
  EXPECT_EQ(paid.result, outcome::applied);
  EXPECT_EQ(shipped.result, outcome::applied);
  EXPECT_FALSE(paid.order_violation);
  EXPECT_FALSE(shipped.order_violation);
  EXPECT_EQ(reserved("A"), 1); // only OrderPlaced reserves
  EXPECT_EQ(hash_integer(names_.aggregate_seq, "order-1"), 3);
  EXPECT_EQ(counter("consumed"), 3);
  auto record = json::parse(hash_field(names_.processed, "e3"));
  EXPECT_EQ(record["event_type"], "OrderShipped");
  EXPECT_FALSE(record.contains("sku"));
  // A duplicate of an older event is not an order violation.
  EXPECT_EQ(box.apply(follow_up("e2", "order-1", 2, "OrderPaid")).result,
            outcome::duplicate);
  EXPECT_EQ(counter("order_violations"), 0);
}

TEST_F(BrokerInbox, OrderViolationWhenSeqTwoComesBeforeSeqOne) {
  inbox box{conn(), names_};
  auto second = box.apply(follow_up("e2", "order-9", 2, "OrderPaid"));
  EXPECT_EQ(second.result, outcome::applied);
  EXPECT_TRUE(second.order_violation);
  // Seq 1 arriving after seq 2 is out of order too.
  auto first = box.apply(order_placed("e1", "order-9", 1, "B", 1));
  EXPECT_EQ(first.result, outcome::applied);
  EXPECT_TRUE(first.order_violation);
  EXPECT_EQ(counter("order_violations"), 2);
  EXPECT_EQ(hash_integer(names_.aggregate_seq, "order-9"), 2);
  // The next one in line is fine again; other aggregates are unaffected.
  EXPECT_FALSE(
      box.apply(follow_up("e3", "order-9", 3, "OrderPaid")).order_violation);
  EXPECT_FALSE(
      box.apply(order_placed("f1", "order-10", 1, "B", 1)).order_violation);
  EXPECT_EQ(counter("order_violations"), 2);
}

TEST_F(BrokerInbox, MalformedEntriesAreDeadLetteredWithReason) {
  inbox box{conn(), names_};
  auto good = json::parse(order_placed("e1", "order-1", 1, "A", 1));
  auto with = [&](const char* field, json value) {
    auto j = good;
    j[field] = std::move(value);
    return j.dump();
  };
  auto without = [&](const char* field) {
    auto j = good;
    j.erase(field);
    return j.dump();
  };
  auto payload_with = [&](const char* field, json value) {
    auto j = good;
    j["payload"][field] = std::move(value);
    return j.dump();
  };
  const std::pair<std::string, std::string> cases[] = {
      {"not json", "entry is not valid JSON"},
      {"", "entry is not valid JSON"},
      {"{\"event_id\":", "entry is not valid JSON"},
      {"null", "entry must be a JSON object"},
      {"42", "entry must be a JSON object"},
      {"[1,2,3]", "entry must be a JSON object"},
      {without("event_id"),
       "event_id must be a non-empty string of at most 128 bytes"},
      {with("event_id", nullptr),
       "event_id must be a non-empty string of at most 128 bytes"},
      {with("event_id", std::string(129, 'e')),
       "event_id must be a non-empty string of at most 128 bytes"},
      {with("aggregate_id", ""), "aggregate_id must be a non-empty string"},
      {with("aggregate_id", 5), "aggregate_id must be a non-empty string"},
      {without("seq"), "seq must be an integer >= 1 (at most 2^53)"},
      {with("seq", nullptr), "seq must be an integer >= 1 (at most 2^53)"},
      {with("seq", 0), "seq must be an integer >= 1 (at most 2^53)"},
      {with("seq", 1.5), "seq must be an integer >= 1 (at most 2^53)"},
      {with("seq", "1"), "seq must be an integer >= 1 (at most 2^53)"},
      {with("seq", 1e300), "seq must be an integer >= 1 (at most 2^53)"},
      {with("event_type", nullptr), "event_type must be a non-empty string"},
      {with("payload", "{}"), "payload must be a JSON object"},
      {with("payload", nullptr), "payload must be a JSON object"},
      {with("payload", json::array({1, 2})), "payload must be a JSON object"},
      {with("published_at", "now"), "published_at must be an integer >= 0"},
      {payload_with("sku", ""), "payload.sku must be a non-empty string"},
      {payload_with("sku", nullptr), "payload.sku must be a non-empty string"},
      {payload_with("qty", 0),
       "payload.qty must be an integer >= 1 (at most 2^53)"},
      {payload_with("qty", "2"),
       "payload.qty must be an integer >= 1 (at most 2^53)"},
      {payload_with("qty", 2.5),
       "payload.qty must be an integer >= 1 (at most 2^53)"},
  };
  for (auto& [text, reason] : cases) {
    auto result = box.apply(text);
    EXPECT_EQ(result.result, outcome::dead_lettered) << text;
    EXPECT_EQ(result.reason, reason) << text;
    // decode() gives the same reason for the generic fields.
    if (reason.rfind("payload.", 0) != 0) {
      auto decoded = decode(text);
      ASSERT_TRUE(std::holds_alternative<malformed_entry>(decoded)) << text;
      EXPECT_EQ(std::get<malformed_entry>(decoded).reason, reason) << text;
    }
  }
  auto count = static_cast<long long>(std::size(cases));
  EXPECT_EQ(counter("dead_lettered"), count);
  auto dead = list(names_.dead_letter);
  ASSERT_EQ(dead.size(), std::size(cases));
  auto first = json::parse(dead.front());
  EXPECT_EQ(first["reason"], "entry is not valid JSON");
  EXPECT_EQ(first["entry"], "not json");
  EXPECT_EQ(first["truncated"], false);
  // Nothing else moved, and the consumer goes on.
  EXPECT_EQ(counter("consumed"), 0);
  EXPECT_EQ(hash_field(names_.processed, "e1"), "");
  EXPECT_EQ(box.apply(good.dump()).result, outcome::applied);
  EXPECT_EQ(reserved("A"), 1);
}

TEST_F(BrokerInbox, HugeEntryIsDeadLetteredTruncated) {
  inbox box{conn(), names_};
  // 2 MB: valid JSON but no event fields, and 2 MB of not-JSON.
  std::string big_object = "{\"blob\":\"" + std::string(2 << 20, 'x') + "\"}";
  std::string big_junk(2 << 20, '{');
  auto object_result = box.apply(big_object);
  auto junk_result = box.apply(big_junk);
  EXPECT_EQ(object_result.result, outcome::dead_lettered);
  EXPECT_EQ(object_result.reason,
            "event_id must be a non-empty string of at most 128 bytes");
  EXPECT_EQ(junk_result.result, outcome::dead_lettered);
  EXPECT_EQ(junk_result.reason, "entry is not valid JSON");
  auto dead = list(names_.dead_letter);
  ASSERT_EQ(dead.size(), 2u);
  const std::string* originals[] = {&big_object, &big_junk};
  for (std::size_t i = 0; i < dead.size(); ++i) {
    auto record = json::parse(dead[i]);
    EXPECT_EQ(record["entry"].get<std::string>(),
              originals[i]->substr(0, 65536));
    EXPECT_EQ(record["size"], originals[i]->size());
    EXPECT_EQ(record["truncated"], true);
  }
  EXPECT_EQ(box.apply(order_placed("e1", "order-1", 1, "A", 5)).result,
            outcome::applied);
  EXPECT_EQ(reserved("A"), 5);
}

TEST_F(BrokerInbox, TruncationKeepsUtf8Whole) {
  inbox box{conn(), names_};
  // "é" is two bytes; an odd offset puts a character across the 64 KiB cut.
  std::string text = "x";
  while (text.size() < 70000)
    text += "\xC3\xA9";
  box.apply(text);
  auto dead = list(names_.dead_letter);
  ASSERT_EQ(dead.size(), 1u);
  auto record = json::parse(dead.front()); // throws on broken UTF-8
  EXPECT_EQ(record["entry"].get<std::string>().size(), 65535u);
}

TEST_F(BrokerInbox, ReloadsScriptAfterScriptFlush) {
  inbox box{conn(), names_};
  EXPECT_EQ(box.apply(order_placed("e1", "o1", 1, "A", 1)).result,
            outcome::applied);
  conn().command({"SCRIPT", "FLUSH"});
  EXPECT_EQ(box.apply(order_placed("e2", "o2", 1, "A", 1)).result,
            outcome::applied);
  EXPECT_EQ(reserved("A"), 2);
}

TEST_F(BrokerInbox, FailedEffectChangesNothing) {
  inbox box{conn(), names_};
  conn().command({"HSET", names_.reserved, "A", "not a number"});
  try {
    box.apply(order_placed("e1", "o1", 1, "A", 1));
    FAIL() << "apply succeeded";
  } catch (const broker_error& e) {
    EXPECT_EQ(e.code(), broker_errc::rejected);
    EXPECT_NE(std::string(e.what()).find("effect failed"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(hash_field(names_.processed, "e1"), "");
  EXPECT_EQ(hash_field(names_.aggregate_seq, "o1"), "");
  EXPECT_EQ(counter("consumed"), 0);
  // Once fixed, the redelivered entry applies.
  conn().command({"HDEL", names_.reserved, "A"});
  EXPECT_EQ(box.apply(order_placed("e1", "o1", 1, "A", 1)).result,
            outcome::applied);
}

TEST_F(BrokerInbox, WrongTypedKeyIsRejectedBeforeAnyWrite) {
  inbox box{conn(), names_};
  conn().command({"SET", names_.counters, "oops"});
  EXPECT_THROW(box.apply(order_placed("e1", "o1", 1, "A", 1)), broker_error);
  EXPECT_EQ(hash_field(names_.processed, "e1"), "");
  EXPECT_EQ(reserved("A"), 0);
}

TEST_F(BrokerInbox, LargeIntegersStayExact) {
  inbox box{conn(), names_};
  std::int64_t seq = 123456789012345;
  box.apply(order_placed("e1", "o1", seq, "A", 1000000000000));
  EXPECT_EQ(hash_field(names_.aggregate_seq, "o1"), "123456789012345");
  EXPECT_EQ(hash_field(names_.reserved, "A"), "1000000000000");
  auto record = json::parse(hash_field(names_.processed, "e1"));
  EXPECT_EQ(record["seq"], seq);
}

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
  EXPECT_EQ(applied[3].reason, "payload.sku must be a non-empty string");
  EXPECT_TRUE(applied[1].reason.empty());
  auto dead = list(names_.dead_letter);
  ASSERT_EQ(dead.size(), 3u);
  EXPECT_EQ(json::parse(dead[0])["entry"], "not json");
  EXPECT_EQ(json::parse(dead[1])["entry"], "[1]");
  EXPECT_EQ(json::parse(dead[2])["reason"],
            "payload.sku must be a non-empty string");
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

TEST_F(BrokerInbox, FailedEffectInABatchKeepsWhatCameBefore) {
  inbox box{conn(), names_};
  conn().command({"HSET", names_.reserved, "B", "not a number"});
  std::vector<std::string> batch = {
      order_placed("e1", "o1", 1, "A", 1), "garbage",
      order_placed("e2", "o2", 1, "B", 1), order_placed("e3", "o3", 1, "A", 1)};
  try {
    box.apply_batch(batch);
    FAIL() << "apply_batch succeeded";
  } catch (const broker_error& e) {
    EXPECT_EQ(e.code(), broker_errc::rejected);
    EXPECT_NE(std::string(e.what()).find("effect failed for e2"),
              std::string::npos)
        << e.what();
  }
  // e1 and the dead letter before the failure stay, with their counts; e2
  // changed nothing; e3 was not reached.
  EXPECT_NE(hash_field(names_.processed, "e1"), "");
  EXPECT_EQ(hash_field(names_.processed, "e2"), "");
  EXPECT_EQ(hash_field(names_.processed, "e3"), "");
  EXPECT_EQ(reserved("A"), 1);
  EXPECT_EQ(counter("consumed"), 1);
  EXPECT_EQ(counter("dead_lettered"), 1);
  EXPECT_EQ(hash_field(names_.aggregate_seq, "o2"), "");
  // Redelivered once fixed: what was applied is absorbed, the rest applies.
  conn().command({"HDEL", names_.reserved, "B"});
  auto applied = box.apply_batch(batch);
  EXPECT_EQ(results_of(applied),
            (outcomes{outcome::duplicate, outcome::dead_lettered,
                      outcome::applied, outcome::applied}));
  EXPECT_EQ(reserved("A"), 2);
  EXPECT_EQ(reserved("B"), 1);
  EXPECT_EQ(counter("consumed"), 3);
  EXPECT_EQ(counter("duplicates"), 1);
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
