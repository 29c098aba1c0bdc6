#include "tests/cli/dead_letters_cli_fixture.hpp"

#include <gmock/gmock.h>
#include <hiredis/hiredis.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

// `outbox dead-letters drop` through the real binary, against a private
// Redis whose dead-letter list is written by hand in the inbox's record
// shape (and with junk).

namespace outbox::test {
namespace {

using json = nlohmann::json;

class CliDeadLetterDrop : public dead_letters_cli_fixture {
protected:
  static std::string entry(const std::string& event_id, int seq) {
    return dead_letters_cli_fixture::entry(event_id, "order-1", seq);
  }

  std::vector<std::string> dead_letters() { return list(names_.dead_letter); }

  /// The decision kept under `field`, parsed; null when there is none.
  json decision(const std::string& field) {
    auto r = conn_.command({"HGET", names_.dead_letter_dropped(), field});
    return r->type == REDIS_REPLY_STRING
               ? json::parse(std::string(r->str, r->len))
               : json(nullptr);
  }

  long long decisions() {
    return conn_.command({"HLEN", names_.dead_letter_dropped()})->integer;
  }
};

TEST_F(CliDeadLetterDrop, DropsEveryRecordOfTheIdAndKeepsTheDecision) {
  auto first = dead_letter(entry("e-1", 1));
  push("junk");
  auto other = dead_letter(entry("e-2", 2));
  dead_letter(entry("e-1", 1), {{"reason", "entry is over the limit"}});

  auto r = outbox_r({"dead-letters", "drop", "e-1", "--reason",
                     "sku kiwi is retired", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto out = json_of(r);
  EXPECT_EQ(out.at("count"), 2);
  EXPECT_EQ(out.at("decisions"), 1);
  EXPECT_EQ(out.at("key"), "pipeline:outbox.dead_letter.dropped");
  EXPECT_EQ(out.at("dropped").at(0).at("index"), 0);
  EXPECT_EQ(out.at("dropped").at(1).at("index"), 3);
  EXPECT_EQ(out.at("dropped").at(1).at("field"), "e-1");
  EXPECT_EQ(dead_letters(), (std::vector<std::string>{"junk", other}));
  auto kept = decision("e-1");
  ASSERT_TRUE(kept.is_object());
  EXPECT_EQ(kept.at("reason"), "sku kiwi is retired");
  EXPECT_EQ(kept.at("record"), first);
  EXPECT_EQ(kept.at("records"), 2);
  EXPECT_GT(kept.at("dropped_at").get<std::int64_t>(), 1'600'000'000'000);

  // The listing counts the decisions; on a terminal-less stdout, text.
  auto listed = outbox_r({"dead-letters", "--json"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_EQ(json_of(listed).at("count"), 2);
  EXPECT_EQ(json_of(listed).at("dropped"), 1);

  auto text = outbox_r({"dead-letters", "drop", "e-2"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, testing::HasSubstr("    1  e-2")) << "its index now";
  EXPECT_THAT(text.out,
              testing::HasSubstr("dropped 1 record; 1 decision recorded in "
                                 "pipeline:outbox.dead_letter.dropped\n"));
  EXPECT_EQ(decision("e-2").at("reason"), "");
  EXPECT_EQ(dead_letters(), std::vector<std::string>{"junk"});
}

TEST_F(CliDeadLetterDrop, AnUnknownIdExits2AndDropsNothing) {
  dead_letter(entry("e-1", 1));
  auto before = dead_letters();

  auto r = outbox_r({"dead-letters", "drop", "e-1", "e-9"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_THAT(r.err, testing::HasSubstr("e-9: no record of the dead-letter "
                                        "list has it"));
  EXPECT_THAT(r.err, testing::HasSubstr("nothing was dropped"));

  auto j = outbox_r({"dead-letters", "drop", "e-9", "e-1", "--json"});
  EXPECT_EQ(j.exit_code, 2);
  auto out = json_of(j);
  EXPECT_EQ(out.at("count"), 0);
  EXPECT_EQ(out.at("unknown"), json::array({"e-9"}));

  EXPECT_EQ(dead_letters(), before);
  EXPECT_EQ(decisions(), 0);
}

TEST_F(CliDeadLetterDrop, MalformedRecordsGoWithTheirFlagOnly) {
  push("junk");
  auto kept = dead_letter(entry("e-1", 1));
  push("junk");

  auto r = outbox_r({"dead-letters", "drop", "--malformed", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto out = json_of(r);
  EXPECT_EQ(out.at("count"), 2);
  EXPECT_EQ(out.at("decisions"), 1) << "identical records, one decision";
  auto field = out.at("dropped").at(0).at("field").get<std::string>();
  EXPECT_EQ(field.rfind("malformed:", 0), 0u) << field;
  EXPECT_EQ(decision(field).at("event_id"), nullptr);
  EXPECT_EQ(dead_letters(), std::vector<std::string>{kept});

  // Nothing of the kind left: done, nothing to do.
  auto again = outbox_r({"dead-letters", "drop", "--malformed"});
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out, "nothing dropped\n");
}

TEST_F(CliDeadLetterDrop, UsageErrorsExit2AndDropNothing) {
  dead_letter(entry("e-1", 1));
  auto before = dead_letters();
  auto none = outbox_r({"dead-letters", "drop"});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_THAT(none.err, testing::HasSubstr("give EVENT_ID..., --malformed"));
  auto long_reason = outbox_r(
      {"dead-letters", "drop", "e-1", "--reason", std::string(1025, 'r')});
  EXPECT_EQ(long_reason.exit_code, 2);
  EXPECT_THAT(long_reason.err, testing::HasSubstr("at most 1024"));
  EXPECT_EQ(outbox_r({"dead-letters", "drop", "e-1", "--bogus"}).exit_code, 2);
  EXPECT_EQ(dead_letters(), before);
  EXPECT_EQ(decisions(), 0);
}

TEST_F(CliDeadLetterDrop, RedisDownIsARuntimeFailure) {
  dead_letter(entry("e-1", 1));
  redis_.stop();
  auto r = outbox_r({"dead-letters", "drop", "e-1"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, testing::HasSubstr("Redis"));
}

} // namespace
} // namespace outbox::test
