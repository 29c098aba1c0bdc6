#include "broker/dead_letter_drop.hpp"

#include "broker/broker_error.hpp"
#include "broker/dead_letters.hpp"
#include "broker/server_time.hpp"
#include "tests/broker/dead_letter_fixture.hpp"

#include <gmock/gmock.h>
#include <hiredis/hiredis.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

// Dropping dead-lettered records with a recorded decision, against a
// private Redis.

namespace outbox::test {
namespace {

using broker::drop_dead_letters;

class BrokerDeadLetterDrop : public dead_letter_fixture {
protected:
  /// The decision kept under `field`, parsed; null when there is none.
  json decision(const std::string& field) {
    auto text = hash_field(names_.dead_letter_dropped(), field);
    return text.empty() ? json(nullptr) : json::parse(text);
  }

  long long decisions() {
    return conn().command({"HLEN", names_.dead_letter_dropped()})->integer;
  }

  std::string e1_ = order_placed("e-1", "order-1", 1, "kiwi", 2);
  std::string e2_ = order_placed("e-2", "order-2", 1, "fig", 1);
};

TEST_F(BrokerDeadLetterDrop, RemovesEveryRecordOfTheIdAndRecordsOneDecision) {
  auto first = record_of(e1_);
  auto other = record_of(e2_);
  // A second record of e-1, as an older version could leave, another reason.
  auto second = record_of(e1_, {{"reason", "entry is 2 bytes, over ..."}});
  dead_letter(first);
  dead_letter("junk");
  dead_letter(other);
  dead_letter(second);

  auto before = broker::server_time_ms(conn());
  auto plan = drop_dead_letters(conn(), names_,
                                {{"e-1"}, false, "sku kiwi is retired"});
  auto after = broker::server_time_ms(conn());

  EXPECT_TRUE(plan.unknown.empty());
  ASSERT_EQ(plan.decisions.size(), 1u);
  EXPECT_EQ(plan.decisions[0].field, "e-1");
  ASSERT_EQ(plan.records(), 2u);
  EXPECT_EQ(plan.decisions[0].records[0].index, 0u);
  EXPECT_EQ(plan.decisions[0].records[1].index, 3u);
  EXPECT_EQ(dead_letters(), (std::vector<std::string>{"junk", other}));

  EXPECT_EQ(decisions(), 1);
  auto kept = decision("e-1");
  ASSERT_TRUE(kept.is_object());
  EXPECT_GE(kept.at("dropped_at").get<std::int64_t>(), before);
  EXPECT_LE(kept.at("dropped_at").get<std::int64_t>(), after);
  EXPECT_EQ(kept.at("reason"), "sku kiwi is retired");
  EXPECT_EQ(kept.at("event_id"), "e-1");
  EXPECT_EQ(kept.at("records"), 2);
  EXPECT_EQ(kept.at("record"), first) << "the oldest record is the evidence";
  EXPECT_EQ(kept.at("record_cut"), false);
}

TEST_F(BrokerDeadLetterDrop, AnUnknownIdDropsNothing) {
  dead_letter(record_of(e1_));
  dead_letter(record_of(e2_));
  auto before = dead_letters();
  auto plan =
      drop_dead_letters(conn(), names_, {{"e-1", "nope", "nope"}, false, ""});
  EXPECT_EQ(plan.unknown, std::vector<std::string>{"nope"});
  EXPECT_TRUE(plan.decisions.empty());
  EXPECT_EQ(dead_letters(), before);
  EXPECT_EQ(decisions(), 0);
}

TEST_F(BrokerDeadLetterDrop, AListChangedSinceTheReadIsLeftAsItIs) {
  auto first = record_of(e1_);
  auto other = record_of(e2_);
  dead_letter(first);
  dead_letter(other);
  auto plan = broker::plan_drop(broker::read_dead_letters(conn(), names_),
                                {{"e-1", "e-2"}, false, ""});
  ASSERT_EQ(plan.records(), 2u);

  // Another operator replays e-2 between the read and the script.
  conn().command({"LREM", names_.dead_letter, "1", other});
  EXPECT_FALSE(broker::apply_drop(conn(), names_, plan, "gone"));
  EXPECT_EQ(dead_letters(), std::vector<std::string>{first}) << "not dropped";
  EXPECT_EQ(decisions(), 0);

  // Planned again on a fresh read, e-2 is unknown now: still nothing.
  auto again = drop_dead_letters(conn(), names_, {{"e-1", "e-2"}, false, ""});
  EXPECT_EQ(again.unknown, std::vector<std::string>{"e-2"});
  EXPECT_EQ(dead_letters(), std::vector<std::string>{first});

  // Records that only moved (one appended before them) are still found.
  auto moved = broker::plan_drop(broker::read_dead_letters(conn(), names_),
                                 {{"e-1"}, false, ""});
  conn().command({"LPUSH", names_.dead_letter, "pushed at the head"});
  EXPECT_TRUE(broker::apply_drop(conn(), names_, moved, ""));
  EXPECT_EQ(dead_letters(), std::vector<std::string>{"pushed at the head"});
  EXPECT_EQ(decisions(), 1);
}

TEST_F(BrokerDeadLetterDrop, IdenticalCopiesNeedAllToBeThere) {
  auto first = record_of(e1_);
  dead_letter(first);
  dead_letter(first);
  auto plan = broker::plan_drop(broker::read_dead_letters(conn(), names_),
                                {{"e-1"}, false, ""});
  conn().command({"LREM", names_.dead_letter, "1", first});
  EXPECT_FALSE(broker::apply_drop(conn(), names_, plan, ""));
  EXPECT_EQ(dead_letters(), std::vector<std::string>{first});
  EXPECT_EQ(decisions(), 0);
}

TEST_F(BrokerDeadLetterDrop, MalformedRecordsGoOnlyWhenAskedEachKeptByDigest) {
  auto named = record_of(e1_);
  auto unreadable = record_of("not json");
  dead_letter("junk");
  dead_letter(unreadable);
  dead_letter(named);
  dead_letter("junk");

  // Named ids never take the records without one.
  auto by_id = drop_dead_letters(conn(), names_, {{"e-1"}, false, ""});
  EXPECT_EQ(by_id.records(), 1u);
  EXPECT_EQ(dead_letters(),
            (std::vector<std::string>{"junk", unreadable, "junk"}));

  auto plan = drop_dead_letters(conn(), names_, {{}, true, "garbage"});
  ASSERT_EQ(plan.decisions.size(), 2u);
  EXPECT_EQ(plan.decisions[0].field, broker::malformed_field("junk"));
  EXPECT_EQ(plan.decisions[0].records.size(), 2u);
  EXPECT_EQ(plan.decisions[1].field, broker::malformed_field(unreadable));
  EXPECT_TRUE(dead_letters().empty());
  EXPECT_EQ(broker::malformed_field("junk").size(), 10u + 40u);
  auto kept = decision(broker::malformed_field("junk"));
  EXPECT_EQ(kept.at("event_id"), nullptr);
  EXPECT_EQ(kept.at("record"), "junk");
  EXPECT_EQ(kept.at("records"), 2);
  EXPECT_EQ(kept.at("reason"), "garbage");
  EXPECT_EQ(decisions(), 3);

  // Nothing of the kind left: nothing to do.
  EXPECT_TRUE(
      drop_dead_letters(conn(), names_, {{}, true, ""}).decisions.empty());
}

TEST_F(BrokerDeadLetterDrop, TheEvidenceIsCutOnACharacterBoundary) {
  // A record far over the cap, its text multi-byte all the way.
  std::string payload;
  for (int i = 0; i < 3000; ++i)
    payload += "\xc3\xa9"; // é
  auto big = record_of(order_placed("e-9", "order-9", 1, payload, 1));
  dead_letter(big);
  drop_dead_letters(conn(), names_, {{"e-9"}, false, ""});
  auto text = hash_field(names_.dead_letter_dropped(), "e-9");
  auto kept = json::parse(text); // throws on a cut sequence (bad UTF-8)
  EXPECT_EQ(kept.at("record_cut"), true);
  EXPECT_EQ(kept.at("record_bytes"), big.size());
  auto evidence = kept.at("record").get<std::string>();
  EXPECT_LE(evidence.size(), broker::max_evidence_bytes);
  EXPECT_GT(evidence.size(), broker::max_evidence_bytes - 4);
  EXPECT_EQ(big.compare(0, evidence.size(), evidence), 0) << "its start";
}

TEST_F(BrokerDeadLetterDrop, AWrongTypedDecisionsKeyFailsWithoutAnyChange) {
  dead_letter(record_of(e1_));
  conn().command({"SET", names_.dead_letter_dropped(), "not a hash"});
  EXPECT_THROW(drop_dead_letters(conn(), names_, {{"e-1"}, false, ""}),
               broker::broker_error);
  EXPECT_EQ(dead_letters(), std::vector<std::string>{record_of(e1_)});
}

} // namespace
} // namespace outbox::test
