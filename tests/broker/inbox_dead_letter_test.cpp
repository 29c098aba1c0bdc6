#include "broker/inbox.hpp"

#include "broker/entry.hpp"
#include "inbox_fixture.hpp"

// Entries the inbox cannot apply: each check of the script gives its reason,
// and the entry goes to the dead-letter list, cut to 64 KiB when huge.

using namespace outbox::broker;
using BrokerInbox = outbox::test::inbox_fixture;

namespace {
const char* const kUnknownVersion =
    "v must be 1 (the queue entry version this consumer reads) or absent";
} // namespace

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
      // A format newer than this consumer reads (an older one has no v).
      {with("v", 2), kUnknownVersion},
      {with("v", "1"), kUnknownVersion},
      {with("v", nullptr), kUnknownVersion},
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

TEST_F(BrokerInbox, IdsThatAreNotCleanTextAreDeadLetteredNotApplied) {
  inbox box{conn(), names_};
  auto good = json::parse(order_placed("e1", "order-1", 1, "A", 1));
  // JSON text with raw bytes substituted for a marker: nlohmann will not
  // write bytes that are not UTF-8, cjson reads them as they are.
  auto with = [&](const char* field, const std::string& raw) {
    auto j = good;
    if (std::string{field} == "sku")
      j["payload"]["sku"] = "@RAW@";
    else
      j[field] = "@RAW@";
    auto text = j.dump();
    text.replace(text.find("@RAW@"), 5, raw);
    return text;
  };
  const std::pair<std::string, std::string> cases[] = {
      {with("event_id", "ev\xff\x1b[2J"), "event_id"},
      {with("event_id", "ev\\u001b[2J"), "event_id"},
      {with("event_id", "ev\\u007f"), "event_id"},
      {with("event_id", "ev\xc2\x9b"), "event_id"},     // C1 CSI
      {with("event_id", "ev\\u0085"), "event_id"},      // C1 NEL, escaped
      {with("event_id", "ev\xc0\xaf"), "event_id"},     // overlong
      {with("event_id", "ev\xed\xa0\x80"), "event_id"}, // surrogate
      {with("event_id", "ev\xe2\x82"), "event_id"},     // cut short
      {with("aggregate_id", "order\xfe"), "aggregate_id"},
      {with("aggregate_id", "order\\n1"), "aggregate_id"},
      {with("event_type", "OrderPlaced\\t"), "event_type"},
      {with("sku", "A\xff"), "payload.sku"},
      {with("sku", "A\\u001b[31m"), "payload.sku"},
  };
  for (auto& [text, field] : cases) {
    auto result = box.apply(text);
    EXPECT_EQ(result.result, outcome::dead_lettered) << text;
    EXPECT_EQ(result.reason,
              field + " must be UTF-8 text without control characters")
        << text;
  }
  EXPECT_EQ(counter("consumed"), 0);
  EXPECT_EQ(reserved("A"), 0);
  EXPECT_EQ(list(names_.dead_letter).size(), std::size(cases));
  EXPECT_EQ(hash_field(names_.aggregate_seq, "order-1"), "");
  // Text that is clean, if not ASCII, is applied.
  auto j = good;
  j["event_id"] = "\xc3\xa9v\xe2\x82\xac\xf0\x9f\x98\x80\xc2\xa0";
  EXPECT_EQ(box.apply(j.dump()).result, outcome::applied);
  EXPECT_EQ(reserved("A"), 1);
}
