#include "broker/entry.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <stdexcept>

using namespace outbox::broker;
using nlohmann::json;

namespace {

event_entry sample() {
  event_entry e;
  e.event_id = "e-1";
  e.aggregate_id = "order-7";
  e.seq = 3;
  e.event_type = "OrderPlaced";
  e.payload = R"({"sku":"A-1","qty":2})";
  e.published_at = 1700000000123;
  return e;
}

std::string reason_of(const std::string& text) {
  auto result = decode(text);
  if (auto* bad = std::get_if<malformed_entry>(&result))
    return bad->reason;
  return "accepted";
}

/// A valid entry as JSON, to break one field at a time.
json valid_json() {
  return json::parse(encode(sample()));
}

} // namespace

TEST(BrokerEntry, EncodeEmbedsPayloadAsObjectAndRoundTrips) {
  auto text = encode(sample());
  auto parsed = json::parse(text);
  EXPECT_TRUE(parsed["payload"].is_object());
  EXPECT_EQ(parsed["payload"]["sku"], "A-1");
  EXPECT_EQ(parsed["seq"], 3);
  auto decoded = decode(text);
  ASSERT_TRUE(std::holds_alternative<event_entry>(decoded));
  auto& e = std::get<event_entry>(decoded);
  EXPECT_EQ(e.event_id, "e-1");
  EXPECT_EQ(e.aggregate_id, "order-7");
  EXPECT_EQ(e.seq, 3);
  EXPECT_EQ(e.event_type, "OrderPlaced");
  EXPECT_EQ(json::parse(e.payload), json::parse(sample().payload));
  EXPECT_EQ(e.published_at, 1700000000123);
}

TEST(BrokerEntry, EncodeWritesTheFormatVersionFirst) {
  auto text = encode(sample());
  EXPECT_EQ(text.rfind("{\"v\":1,", 0), 0u) << text;
  EXPECT_EQ(entry_version, 1);
}

TEST(BrokerEntry, EntryOfAnOlderRelayWithoutVersionDecodes) {
  auto j = valid_json();
  j.erase("v");
  auto decoded = decode(j.dump());
  ASSERT_TRUE(std::holds_alternative<event_entry>(decoded))
      << reason_of(j.dump());
  EXPECT_EQ(std::get<event_entry>(decoded).event_id, "e-1");
  // Written again, it is a current entry.
  EXPECT_EQ(json::parse(encode(std::get<event_entry>(decoded)))["v"], 1);
}

TEST(BrokerEntry, VersionThisReaderDoesNotKnowIsRefused) {
  for (json v : {json(2), json(0), json("1"), json(nullptr), json(1.5)}) {
    auto j = valid_json();
    j["v"] = v;
    EXPECT_EQ(reason_of(j.dump()),
              "v must be 1 (the queue entry version this consumer reads) or "
              "absent")
        << j.dump();
  }
  auto j = valid_json();
  j["v"] = 1.0; // cjson cannot tell 1.0 from 1, so neither side does
  EXPECT_EQ(reason_of(j.dump()), "accepted");
}

TEST(BrokerEntry, PublishedAtIsOptional) {
  auto e = sample();
  e.published_at = 0;
  auto text = encode(e);
  EXPECT_FALSE(json::parse(text).contains("published_at"));
  auto decoded = decode(text);
  ASSERT_TRUE(std::holds_alternative<event_entry>(decoded));
  EXPECT_EQ(std::get<event_entry>(decoded).published_at, 0);
}

TEST(BrokerEntry, HeadersTravelAsAnObjectAndAreOptional) {
  auto e = sample();
  e.headers = R"({"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-)"
              R"(00f067aa0ba902b7-01","tenant":"acme"})";
  auto text = encode(e);
  auto parsed = json::parse(text);
  ASSERT_TRUE(parsed["headers"].is_object()) << text;
  EXPECT_EQ("acme", parsed["headers"]["tenant"]);
  auto decoded = decode(text);
  ASSERT_TRUE(std::holds_alternative<event_entry>(decoded));
  EXPECT_EQ(json::parse(e.headers),
            json::parse(std::get<event_entry>(decoded).headers));
  // None: no field at all, as older relays wrote.
  EXPECT_FALSE(json::parse(encode(sample())).contains("headers"));
  EXPECT_EQ("", std::get<event_entry>(decode(encode(sample()))).headers);
  for (auto headers : {"[]", "\"x\"", R"({"a":1})", "not json"}) {
    auto bad = sample();
    bad.headers = headers;
    EXPECT_THROW(encode(bad), std::invalid_argument) << headers;
  }
}

TEST(BrokerEntry, EncodeRejectsPayloadThatIsNotAnObject) {
  for (auto payload : {"", "not json", "[1,2]", "42", "null", "\"text\""}) {
    auto e = sample();
    e.payload = payload;
    EXPECT_THROW(encode(e), std::invalid_argument) << payload;
  }
}

TEST(BrokerEntry, DecodeNamesWhatIsWrong) {
  EXPECT_EQ(reason_of("not json"), "entry is not valid JSON");
  EXPECT_EQ(reason_of(""), "entry is not valid JSON");
  EXPECT_EQ(reason_of("[1,2]"), "entry must be a JSON object");
  EXPECT_EQ(reason_of("null"), "entry must be a JSON object");

  struct broken {
    const char* field;
    json value; // null here means "remove the field"
    const char* reason_start;
  };
  const broken cases[] = {
      {"event_id", nullptr, "event_id must be"},
      {"event_id", "", "event_id must be"},
      {"event_id", 12, "event_id must be"},
      {"event_id", std::string(129, 'x'), "event_id must be"},
      {"aggregate_id", nullptr, "aggregate_id must be"},
      {"aggregate_id", "", "aggregate_id must be"},
      {"seq", nullptr, "seq must be an integer >= 1"},
      {"seq", 0, "seq must be an integer >= 1"},
      {"seq", -4, "seq must be an integer >= 1"},
      {"seq", 1.5, "seq must be an integer >= 1"},
      {"seq", "3", "seq must be an integer >= 1"},
      {"seq", 9007199254740993ull, "seq must be an integer >= 1"},
      {"event_type", nullptr, "event_type must be"},
      {"event_type", json::array(), "event_type must be"},
      {"payload", nullptr, "payload must be a JSON object"},
      {"payload", "{\"sku\":\"A\"}", "payload must be a JSON object"},
      {"payload", json::array({1}), "payload must be a JSON object"},
      {"published_at", "yesterday", "published_at must be"},
      // Control characters in what keys are made of (the inbox script has
      // the same rule; nlohmann refuses bytes that are not UTF-8 already).
      {"event_id", "ev\x1b[2J", "event_id must be UTF-8 text without"},
      {"event_id", "ev\xc2\x9b", "event_id must be UTF-8 text without"},
      {"aggregate_id", "a\n", "aggregate_id must be UTF-8 text without"},
      {"event_type", "T\x7f", "event_type must be UTF-8 text without"},
  };
  for (auto& c : cases) {
    auto j = valid_json();
    if (c.value.is_null())
      j.erase(c.field);
    else
      j[c.field] = c.value;
    EXPECT_EQ(reason_of(j.dump()).rfind(c.reason_start, 0), 0u)
        << j.dump() << " -> " << reason_of(j.dump());
  }
  // An OrderPlaced's payload is its effect's to judge (the built-in one,
  // effects/orders.lua, sets a bad one aside): decode() reads any object.
  for (const auto& payload :
       {json{{"qty", 1}}, json{{"sku", "apple"}, {"qty", 0}}, json::object()}) {
    auto order = valid_json();
    order["event_type"] = "OrderPlaced";
    order["payload"] = payload;
    EXPECT_TRUE(std::holds_alternative<event_entry>(decode(order.dump())))
        << order.dump();
  }
  // JSON null is a wrong type, not an absent field.
  auto j = valid_json();
  j["seq"] = nullptr;
  EXPECT_EQ(reason_of(j.dump()), "seq must be an integer >= 1 (at most 2^53)");
}

TEST(BrokerEntry, DecodeAcceptsIntegralFloatSeqLikeTheScript) {
  auto j = valid_json();
  j["seq"] = 4.0;
  auto decoded = decode(j.dump());
  ASSERT_TRUE(std::holds_alternative<event_entry>(decoded));
  EXPECT_EQ(std::get<event_entry>(decoded).seq, 4);
}

TEST(BrokerEntry, APlainEntrysIdIsReadWithoutParsingIt) {
  auto e = sample();
  e.event_id = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";
  EXPECT_EQ(plain_event_id(encode(e)), e.event_id);
  // Anything that could hide another event_id, or spell this one
  // differently, is left to decode().
  const char* unsure[] = {
      // An escape anywhere: a key could be spelled "event\u005fid".
      R"({"v":1,"event_id":"e-1","aggregate_id":"o","seq":1,)"
      R"("event_type":"T","payload":{"note":"a \"quote\""}})",
      // Written twice: decode takes the last.
      R"({"v":1,"event_id":"e-1","aggregate_id":"o","seq":1,)"
      R"("event_type":"T","payload":{},"event_id":"e-2"})",
      // Space before the value, or a value that is no string.
      R"({"v":1,"event_id" : "e-1","aggregate_id":"o","seq":1,)"
      R"("event_type":"T","payload":{}})",
      R"({"v":1,"event_id":7,"aggregate_id":"o","seq":1,)"
      R"("event_type":"T","payload":{}})",
      // No event_id, or one never closed.
      R"({"v":1,"aggregate_id":"o","seq":1,"event_type":"T","payload":{}})",
      R"({"v":1,"event_id":"e-1)",
  };
  for (const char* text : unsure)
    EXPECT_EQ(plain_event_id(text), std::nullopt) << text;
}

TEST(BrokerEntry, APlainIdIsNeverAnotherThanTheDecodedOne) {
  // For every entry decode() accepts, plain_event_id names the same event
  // or none: a reader that trusts it never misses an id decode would see.
  const std::string tail =
      R"("aggregate_id":"o","seq":1,"event_type":"T","payload":{"k":"v"}})";
  const std::string texts[] = {
      encode(sample()),
      R"({"v":1,"event_id":"a",)" + tail,
      R"({"event_id":"a",)" + tail,
      R"({"event_id":"a","event_id":"b",)" + tail,
      R"({"event_id":"a","event\u005fid":"b",)" + tail,
      R"({"event_id":"a\u0062",)" + tail,
      R"({"payload":{"event_id":"x"},"event_id":"a",)" + tail,
      R"({"aggregate_id":"event_id","event_id":"a","seq":1,)"
      R"("event_type":"T","payload":{}})",
      R"({ "event_id":"a", )" + tail,
  };
  for (const auto& text : texts) {
    auto decoded = decode(text);
    auto* entry = std::get_if<event_entry>(&decoded);
    ASSERT_NE(entry, nullptr) << text;
    auto plain = plain_event_id(text);
    if (plain) {
      EXPECT_EQ(*plain, entry->event_id) << text;
    }
  }
  // Not an entry decode() accepts (no top-level event_id): a plain reader
  // may name the nested one, which only keeps more.
  EXPECT_EQ(plain_event_id(R"({"payload":{"event_id":"x"},)" + tail), "x");
}
