#include "broker/inbox.hpp"

#include "broker/entry.hpp"
#include "tests/broker/inbox_cases.hpp"
#include "tests/broker/inbox_fixture.hpp"

// Entries the inbox cannot apply: each check of the script gives its reason
// (the cases: inbox_cases.cpp), and the entry goes to the dead-letter list,
// cut to 64 KiB when huge.

using namespace outbox::broker;
using BrokerInbox = outbox::test::inbox_fixture;

TEST_F(BrokerInbox, MalformedEntriesAreDeadLetteredWithReason) {
  inbox box{conn(), names_};
  // Every malformed entry of the shared table, on one inbox, one after the
  // other: none of them changes anything but the dead letters.
  auto cases = outbox::test::dead_letter_steps();
  for (const auto& step : cases) {
    auto result = box.apply(step.entry);
    EXPECT_EQ(result.result, outcome::dead_lettered) << step.entry;
    EXPECT_EQ(result.reason, step.reason) << step.entry;
    // decode() gives the same reason (but for bytes that are not UTF-8).
    auto decoded = decode(step.entry);
    ASSERT_TRUE(std::holds_alternative<malformed_entry>(decoded)) << step.entry;
    EXPECT_EQ(std::get<malformed_entry>(decoded).reason,
              step.decode_reason.empty() ? step.reason : step.decode_reason)
        << step.entry;
  }
  auto count = static_cast<long long>(cases.size());
  EXPECT_EQ(counter("dead_lettered"), count);
  auto dead = list(names_.dead_letter);
  ASSERT_EQ(dead.size(), cases.size());
  auto first = json::parse(dead.front());
  EXPECT_EQ(first["reason"], "entry is not valid JSON");
  EXPECT_EQ(first["entry"], "not json");
  EXPECT_EQ(first["truncated"], false);
  // Nothing else moved, and the consumer goes on.
  EXPECT_EQ(counter("consumed"), 0);
  EXPECT_EQ(hash_field(names_.processed, "e1"), "");
  EXPECT_EQ(counter("order_violations"), 0);
  EXPECT_EQ(hash_field(names_.aggregate_seq, "order-1"), "");
  EXPECT_EQ(box.apply(order_placed("e1", "order-1", 1, "A", 1)).result,
            outcome::applied);
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
