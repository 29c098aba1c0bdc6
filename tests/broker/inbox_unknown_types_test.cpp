#include "broker/broker_error.hpp"
#include "broker/dead_letters.hpp"
#include "broker/inbox.hpp"
#include "broker/inbox_options.hpp"
#include "broker/inbox_script.hpp"
#include "tests/broker/inbox_fixture.hpp"

#include <gmock/gmock.h>

#include <stdexcept>

// consumer.unknown_types: an event type the inbox has no effect for is
// recorded (the default) or set aside on the dead-letter list, its
// aggregate moving on, until a replay once the type is known.

using namespace outbox::broker;
using BrokerInboxUnknownTypes = outbox::test::inbox_fixture;

namespace {

inbox_options dead_lettering() {
  inbox_options options;
  options.unknown = unknown_types::dead_letter;
  return options;
}

} // namespace

TEST_F(BrokerInboxUnknownTypes,
       ByDefaultAnUnknownTypeIsRecordedAndDoesNothing) {
  inbox box{conn(), names_};
  auto got = box.apply(follow_up("e1", "invoice-7", 1, "InvoiceIssued"));
  EXPECT_EQ(got.result, outcome::applied);
  auto record = json::parse(hash_field(names_.processed, "e1"));
  EXPECT_EQ(record["event_type"], "InvoiceIssued");
  EXPECT_EQ(list(names_.dead_letter).size(), 0u);
  EXPECT_EQ(hash_integer(names_.aggregate_seq, "invoice-7"), 1);
}

TEST_F(BrokerInboxUnknownTypes, DeadLetterSetsItAsideAndItsAggregateMovesOn) {
  inbox box{conn(), names_, {}, dead_lettering()};
  auto unknown = follow_up("e1", "invoice-7", 1, "InvoiceIssued");
  auto got = box.apply(unknown);
  ASSERT_EQ(got.result, outcome::dead_lettered);
  EXPECT_EQ(got.reason, "unknown event type InvoiceIssued"
                        " (consumer.unknown_types is dead-letter)");
  EXPECT_EQ(hash_field(names_.processed, "e1"), "") << "no record";
  auto dead = list(names_.dead_letter);
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(json::parse(dead[0])["entry"], unknown);
  EXPECT_EQ(counter("dead_lettered"), 1);
  EXPECT_EQ(counter("consumed"), 0);

  // The aggregate's next event is applied in order, the demo's types too.
  auto next = box.apply(order_placed("e2", "invoice-7", 2, "A", 3));
  EXPECT_EQ(next.result, outcome::applied);
  EXPECT_FALSE(next.order_violation);
  EXPECT_EQ(reserved("A"), 3);
  for (auto type : {"OrderPaid", "OrderShipped", "OrderDelivered"})
    EXPECT_EQ(box.apply(follow_up(std::string{"e-"} + type, "o1",
                                  type == std::string{"OrderPaid"}      ? 1
                                  : type == std::string{"OrderShipped"} ? 2
                                                                        : 3,
                                  type))
                  .result,
              outcome::applied)
        << type;
  EXPECT_EQ(counter("order_violations"), 0);

  // Another copy of the set-aside event (a recovery, a second publish) is
  // a duplicate, not a second dead letter.
  EXPECT_EQ(box.apply(unknown).result, outcome::duplicate);
  EXPECT_EQ(list(names_.dead_letter).size(), 1u);
}

TEST_F(BrokerInboxUnknownTypes, AReplayOnceTheTypeIsKnownAppliesItOnce) {
  auto unknown = follow_up("e1", "invoice-7", 1, "InvoiceIssued");
  {
    inbox box{conn(), names_, {}, dead_lettering()};
    ASSERT_EQ(box.apply(unknown).result, outcome::dead_lettered);
  }
  auto put_back = replay_dead_letters(conn(), names_, {{"e1"}, false});
  ASSERT_EQ(put_back.replayed.size(), 1u);
  conn().command({"LPOP", put_back.replayed[0].queue});

  auto knowing = dead_lettering();
  knowing.known_types.push_back("InvoiceIssued");
  inbox box{conn(), names_, {}, knowing};
  auto replayed = box.apply(unknown);
  EXPECT_EQ(replayed.result, outcome::applied);
  EXPECT_FALSE(replayed.order_violation) << "late on purpose";
  EXPECT_NE(hash_field(names_.processed, "e1"), "");
  EXPECT_EQ(box.apply(unknown).result, outcome::duplicate);
  EXPECT_EQ(list(names_.dead_letter).size(), 0u);
}

TEST_F(BrokerInboxUnknownTypes, AnEventRecordedBeforeTheSwitchStaysADuplicate) {
  auto unknown = follow_up("e1", "invoice-7", 1, "InvoiceIssued");
  inbox recording{conn(), names_};
  ASSERT_EQ(recording.apply(unknown).result, outcome::applied);
  // A seq the gaps hash names is not a duplicate by seq alone (a jump
  // skipped it): the record written under the record policy decides.
  conn().command({"HSET", names_.seq_gaps(), "invoice-7:1", "1"});
  inbox box{conn(), names_, {}, dead_lettering()};
  EXPECT_EQ(box.apply(unknown).result, outcome::duplicate);
  EXPECT_EQ(list(names_.dead_letter).size(), 0u);
}

TEST_F(BrokerInboxUnknownTypes,
       OptionsTheScriptCannotReadFailTheCallChangingNothing) {
  auto entry = follow_up("e1", "invoice-7", 1, "InvoiceIssued");
  for (std::string options :
       {"{not json", R"({"unknown_types":"drop"})", R"({"holder":7})",
        R"({"known_types":"OrderPlaced"})", R"({"known_types":[1]})",
        R"({"known_types":{"OrderPlaced":true}})"}) {
    auto sha = reply_text(*conn().command({"SCRIPT", "LOAD", inbox::script()}));
    auto keys = inbox_script_keys(names_);
    std::vector<std::string> call{"EVALSHA", sha, std::to_string(keys.size())};
    call.insert(call.end(), keys.begin(), keys.end());
    call.push_back(options);
    call.push_back(entry);
    try {
      conn().command(call);
      ADD_FAILURE() << options << " was taken";
    } catch (const broker_error& e) {
      EXPECT_THAT(e.what(), ::testing::HasSubstr(": OUTBOX_OPTIONS ARGV[1]"))
          << options;
    }
  }
  EXPECT_EQ(hash_field(names_.processed, "e1"), "");
  EXPECT_EQ(list(names_.dead_letter).size(), 0u);
  EXPECT_EQ(counter("consumed"), 0);
}

TEST(BrokerUnknownTypesWords, AreTheConfigValues) {
  EXPECT_EQ(parse_unknown_types("record"), unknown_types::record);
  EXPECT_EQ(parse_unknown_types("dead-letter"), unknown_types::dead_letter);
  EXPECT_STREQ(unknown_types_name(unknown_types::dead_letter), "dead-letter");
  EXPECT_THROW(parse_unknown_types("drop"), std::invalid_argument);
}
