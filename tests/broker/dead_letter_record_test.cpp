#include "broker/dead_letter_record.hpp"

#include "tests/broker/event_entries.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

// Records of the dead-letter list as `outbox dead-letters` reads them:
// the inbox's shape, extra fields of a later inbox, and junk pushed by hand.

namespace outbox::broker {
namespace {

using json = nlohmann::json;

const std::string good_entry =
    R"({"event_id":"e-1","aggregate_id":"order-1","seq":2,)"
    R"("event_type":"OrderPlaced","payload":{"sku":"kiwi","qty":3}})";

std::string record_of(const std::string& entry, json patch = json::object()) {
  return outbox::test::dead_letter_record(entry, "effect failed", patch);
}

TEST(BrokerDeadLetterRecord, AnInboxRecordOfAWellFormedEntryIsReplayable) {
  auto d = parse_dead_letter(3, record_of(good_entry));
  EXPECT_EQ(d.index, 3u);
  EXPECT_EQ(d.record_problem, "");
  EXPECT_EQ(d.reason, "effect failed");
  EXPECT_EQ(d.entry, good_entry);
  EXPECT_EQ(d.size, static_cast<std::int64_t>(good_entry.size()));
  EXPECT_FALSE(d.truncated);
  EXPECT_EQ(d.event_id, "e-1");
  EXPECT_EQ(d.aggregate_id, "order-1");
  EXPECT_EQ(d.seq, 2);
  EXPECT_EQ(d.event_type, "OrderPlaced");
  EXPECT_TRUE(d.replayable()) << d.not_replayable;
  EXPECT_TRUE(d.extra.empty());
}

TEST(BrokerDeadLetterRecord, UnknownFieldsAreKeptNotRefused) {
  auto d = parse_dead_letter(
      0, record_of(good_entry, {{"at", 1700000000000}, {"error", "ERR x"}}));
  EXPECT_TRUE(d.replayable()) << d.not_replayable;
  ASSERT_EQ(d.extra.size(), 2u);
  EXPECT_EQ(d.extra.at("at"), "1700000000000");
  EXPECT_EQ(d.extra.at("error"), "\"ERR x\"");
}

TEST(BrokerDeadLetterRecord, CjsonNumbersWithAFractionPartStillCount) {
  auto text = R"({"reason":"r","entry":"x","size":1.0,"truncated":false})";
  auto d = parse_dead_letter(0, text);
  EXPECT_EQ(d.record_problem, "");
  EXPECT_EQ(d.size, 1);
}

TEST(BrokerDeadLetterRecord, ATruncatedEntryShowsItsIdsButCannotBeReplayed) {
  auto cut = good_entry.substr(0, 60);
  auto d = parse_dead_letter(
      0, record_of(cut, {{"truncated", true}, {"size", 200000}}));
  EXPECT_EQ(d.record_problem, "");
  EXPECT_TRUE(d.truncated);
  EXPECT_EQ(d.event_id, "e-1");
  EXPECT_EQ(d.aggregate_id, "order-1");
  EXPECT_FALSE(d.replayable());
  EXPECT_THAT(d.not_replayable, testing::HasSubstr("truncated"));
}

TEST(BrokerDeadLetterRecord, AMalformedEntryIsNotReplayableAndSaysWhy) {
  auto d = parse_dead_letter(
      0, record_of(R"({"event_id":"e-2","aggregate_id":"a","seq":0})"));
  EXPECT_EQ(d.event_id, "e-2");
  EXPECT_EQ(d.seq, 0);
  EXPECT_FALSE(d.replayable());
  EXPECT_THAT(d.not_replayable,
              testing::HasSubstr("seq must be an integer >= 1"));

  auto junk = parse_dead_letter(0, record_of("this is not json"));
  EXPECT_EQ(junk.record_problem, "");
  EXPECT_FALSE(junk.event_id);
  EXPECT_FALSE(junk.replayable());
}

TEST(BrokerDeadLetterRecord, JunkRecordsAreDescribedNeverThrown) {
  const std::pair<std::string, std::string> cases[] = {
      {"not json at all", "record is not valid JSON"},
      {"", "record is not valid JSON"},
      {std::string(5000, '['), "record is not valid JSON"},
      {"[1,2]", "record is not a JSON object"},
      {"42", "record is not a JSON object"},
      {R"({"entry":"x","size":1,"truncated":false})",
       "record has no \"reason\" string"},
      {R"({"reason":"r","entry":7,"size":1,"truncated":false})",
       "record has no \"entry\" string"},
      {R"({"reason":"r","entry":"x","size":"1","truncated":false})",
       "record has no \"size\" integer >= 0"},
      {R"({"reason":"r","entry":"x","size":-1,"truncated":false})",
       "record has no \"size\" integer >= 0"},
      {R"({"reason":"r","entry":"x","size":1.5,"truncated":false})",
       "record has no \"size\" integer >= 0"},
      {R"({"reason":"r","entry":"x","size":1})",
       "record has no \"truncated\" boolean"},
  };
  for (const auto& [text, problem] : cases) {
    auto d = parse_dead_letter(5, text);
    EXPECT_EQ(d.record_problem, problem) << text.substr(0, 60);
    EXPECT_EQ(d.record, text);
    EXPECT_FALSE(d.replayable());
    EXPECT_EQ(d.not_replayable, "malformed record: " + problem);
  }
}

TEST(BrokerDeadLetterRecord,
     BytesThatAreNotUtf8AreShownReplacedAndNotReplayed) {
  // cjson copies such bytes into the record as they are.
  auto record = record_of(good_entry);
  record.replace(record.find("kiwi"), 4, "ki\xffi");
  auto d = parse_dead_letter(0, record);
  EXPECT_EQ(d.record_problem, "");
  EXPECT_TRUE(d.not_utf8);
  EXPECT_TRUE(is_utf8(d.entry));
  EXPECT_THAT(d.entry, testing::HasSubstr("ki\xEF\xBF\xBDi"));
  EXPECT_EQ(d.event_id, "e-1");
  EXPECT_FALSE(d.replayable());
}

TEST(BrokerDeadLetterRecord, Utf8ChecksRefuseOverlongSurrogatesAndStrayBytes) {
  EXPECT_TRUE(is_utf8("plain"));
  EXPECT_TRUE(is_utf8("cr\xC3\xA8me \xE2\x82\xAC \xF0\x9F\x8D\x8B"));
  EXPECT_FALSE(is_utf8("\xC0\xAF"));         // overlong '/'
  EXPECT_FALSE(is_utf8("\xED\xA0\x80"));     // a surrogate
  EXPECT_FALSE(is_utf8("\xF4\x90\x80\x80")); // past U+10FFFF
  EXPECT_FALSE(is_utf8("\x80"));
  EXPECT_FALSE(is_utf8("\xE2\x82")); // cut short
  EXPECT_EQ(to_utf8("a\xFF"
                    "b\xE2\x82"),
            "a\xEF\xBF\xBD"
            "b\xEF\xBF\xBD\xEF\xBF\xBD");
}

} // namespace
} // namespace outbox::broker
