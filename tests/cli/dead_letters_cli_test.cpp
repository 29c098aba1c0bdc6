#include "tests/cli/dead_letters_cli_fixture.hpp"

#include <gmock/gmock.h>
#include <hiredis/hiredis.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

// `outbox dead-letters` and `outbox dead-letters replay` through the real
// binary, against a private Redis whose dead-letter list is written by hand
// in the inbox's record shape (and with junk).

namespace outbox::test {
namespace {

using json = nlohmann::json;

class CliDeadLetters : public dead_letters_cli_fixture {
protected:
  void SetUp() override { names_.partitions = 4; } // the config's default
};

TEST_F(CliDeadLetters, AnEmptyListIsFine) {
  auto text = outbox_r({"dead-letters"});
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_EQ(text.out, "no dead-lettered entries\n");
  auto r = outbox_r({"dead-letters", "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(
      json_of(r),
      (json{{"dead_letters", json::array()}, {"count", 0}, {"dropped", 0}}));
}

TEST_F(CliDeadLetters, ListsRecordsOldestFirstWithJunkAsSuch) {
  auto long_reason = std::string(200, 'r');
  dead_letter(entry("e-1", "order-1", 1), {{"reason", long_reason}});
  push("someone pushed this");
  dead_letter(entry("e-2", "order-2", 3), {{"at", 1700000000000}});

  auto r = outbox_r({"dead-letters"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Header, three rows, the summary line.
  std::vector<std::string> lines;
  for (std::size_t at = 0, end;
       (end = r.out.find('\n', at)) != std::string::npos; at = end + 1)
    lines.push_back(r.out.substr(at, end - at));
  ASSERT_EQ(lines.size(), 5u) << r.out;
  EXPECT_EQ(lines[0].rfind("INDEX  EVENT_ID", 0), 0u) << r.out;
  EXPECT_EQ(lines[1].rfind("    0  e-1       order-1", 0), 0u) << r.out;
  EXPECT_THAT(lines[1], testing::HasSubstr("rrr...")) << "long reason cut";
  EXPECT_THAT(lines[1], testing::Not(testing::HasSubstr(long_reason)));
  EXPECT_THAT(lines[2],
              testing::HasSubstr("malformed record: record is not valid JSON"))
      << r.out;
  EXPECT_EQ(lines[3].rfind("    2  e-2", 0), 0u) << r.out;
  EXPECT_EQ(lines[4].rfind("3 dead-lettered entries, 2 replayable", 0), 0u)
      << r.out;

  auto j = outbox_r({"dead-letters", "--json"});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  auto out = json_of(j);
  EXPECT_EQ(out.at("count"), 3);
  auto& first = out.at("dead_letters").at(0);
  EXPECT_EQ(first.at("index"), 0);
  EXPECT_EQ(first.at("event_id"), "e-1");
  EXPECT_EQ(first.at("aggregate_id"), "order-1");
  EXPECT_EQ(first.at("seq"), 1);
  EXPECT_EQ(first.at("event_type"), "OrderPlaced");
  EXPECT_EQ(first.at("reason"), long_reason) << "JSON keeps values whole";
  EXPECT_EQ(first.at("entry"), entry("e-1", "order-1", 1));
  EXPECT_EQ(first.at("truncated"), false);
  EXPECT_EQ(first.at("replayable"), true);
  auto& junk = out.at("dead_letters").at(1);
  EXPECT_EQ(junk.at("malformed_record"), "record is not valid JSON");
  EXPECT_EQ(junk.at("record"), "someone pushed this");
  EXPECT_EQ(junk.at("event_id"), nullptr);
  EXPECT_EQ(junk.at("replayable"), false);
  EXPECT_EQ(out.at("dead_letters").at(2).at("extra"),
            (json{{"at", 1700000000000}}));
}

TEST_F(CliDeadLetters, ControlCharactersNeverReachTheTerminal) {
  // An entry a hand-made producer sent: its ids hold escape sequences.
  dead_letter(entry("e-\x1b[2J", "order-\xc2\x9b", 1),
              {{"reason", "bad\x07 \x1b]0;title\x07"}});
  std::string record = "junk \x1b[31m red";
  push(record);
  auto r = outbox_r({"dead-letters"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (unsigned char c : r.out)
    EXPECT_TRUE((c >= 0x20 && c != 0x7f) || c == '\n')
        << "raw control byte " << int(c);
  EXPECT_THAT(r.out, testing::Not(testing::HasSubstr("\xc2\x9b"))) << "C1 CSI";
  EXPECT_THAT(r.out, testing::HasSubstr("e-\\e[2J"));
  EXPECT_THAT(r.out, testing::HasSubstr("order-\\u009b"));

  auto j = outbox_r({"dead-letters", "--json"});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  // Plain ASCII: C1 controls such as U+009B are escaped too.
  for (unsigned char c : j.out)
    EXPECT_TRUE((c >= 0x20 && c < 0x7f) || c == '\n') << "raw byte " << int(c);
  EXPECT_EQ(json_of(j).at("dead_letters").at(0).at("event_id"), "e-\x1b[2J");
}

TEST_F(CliDeadLetters, ReplayPutsEntriesAtTheHeadOfTheirQueuesInOrder) {
  auto queue = names_.queue_for("order-1");
  conn_.command({"RPUSH", queue, "already-queued"});
  auto first = entry("e-1", "order-1", 1);
  auto second = entry("e-2", "order-1", 2);
  dead_letter(first);
  auto junk_at_1 = dead_letter("not json");
  dead_letter(second);

  auto r = outbox_r({"dead-letters", "replay", "e-2", "e-1", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto out = json_of(r);
  EXPECT_EQ(out.at("count"), 2);
  EXPECT_EQ(out.at("replayed").at(0).at("event_id"), "e-1");
  EXPECT_EQ(out.at("replayed").at(0).at("queue"), queue);
  EXPECT_EQ(out.at("replayed").at(1).at("index"), 2);
  EXPECT_EQ(list(queue),
            (std::vector<std::string>{first, second, "already-queued"}));
  EXPECT_EQ(list(names_.dead_letter), std::vector<std::string>{junk_at_1});
  EXPECT_EQ(list(names_.doorbell_for(queue)), std::vector<std::string>{"1"});
}

TEST_F(CliDeadLetters, ReplayAllSkipsAndReportsWhatCannotGoBack) {
  auto first = entry("e-1", "order-1", 1);
  auto other = entry("e-3", "order-3", 1);
  dead_letter(first);
  auto truncated = dead_letter(entry("e-2", "order-1", 2).substr(0, 50),
                               {{"truncated", true}, {"size", 100000}});
  push("junk");
  dead_letter(other);

  // Some went back, some stay: partly done (exit 4), the rest named.
  auto r = outbox_r({"dead-letters", "replay", "--all"});
  ASSERT_EQ(r.exit_code, 4) << r.err;
  EXPECT_THAT(r.err, testing::HasSubstr(
                         "2 records cannot be replayed and stay in the list: "
                         "partly done"));
  EXPECT_THAT(r.out, testing::HasSubstr("replayed 2 entries"));
  EXPECT_THAT(r.out, testing::HasSubstr("LEFT IN THE LIST BECAUSE"));
  EXPECT_THAT(r.out, testing::HasSubstr("truncated"));
  EXPECT_THAT(r.out, testing::HasSubstr("malformed record"));
  EXPECT_EQ(list(names_.queue_for("order-1")), std::vector<std::string>{first});
  EXPECT_EQ(list(names_.queue_for("order-3")).back(), other);
  EXPECT_EQ(list(names_.dead_letter),
            (std::vector<std::string>{truncated, "junk"}));

  // Only unreplayable records left: nothing was done (exit 2).
  auto again = outbox_r({"dead-letters", "replay", "--all", "--json"});
  ASSERT_EQ(again.exit_code, 2) << again.err;
  EXPECT_THAT(again.err, testing::HasSubstr("nothing was replayed"));
  auto out = json_of(again);
  EXPECT_EQ(out.at("count"), 0);
  ASSERT_EQ(out.at("skipped").size(), 2u);
  EXPECT_EQ(out.at("skipped").at(0).at("event_id"), "e-2");
  EXPECT_EQ(out.at("skipped").at(1).at("index"), 1);
}

TEST_F(CliDeadLetters, ATruncatedOrUnknownIdExits2AndChangesNothing) {
  dead_letter(entry("e-1", "order-1", 1));
  dead_letter(entry("e-2", "order-1", 2).substr(0, 50),
              {{"truncated", true}, {"size", 100000}});
  auto before = list(names_.dead_letter);

  auto truncated = outbox_r({"dead-letters", "replay", "e-1", "e-2"});
  EXPECT_EQ(truncated.exit_code, 2);
  EXPECT_THAT(truncated.err, testing::HasSubstr("e-2 (index 1): truncated"));
  EXPECT_THAT(truncated.err, testing::HasSubstr("nothing was replayed"));

  auto unknown = outbox_r({"dead-letters", "replay", "e-1", "e-9", "--json"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_THAT(unknown.err, testing::HasSubstr("e-9: no record"));
  auto out = json_of(unknown);
  EXPECT_EQ(out.at("count"), 0);
  EXPECT_EQ(out.at("refused").at(0).at("event_id"), "e-9");

  EXPECT_EQ(list(names_.dead_letter), before);
  EXPECT_TRUE(list(names_.queue_for("order-1")).empty());
}

TEST_F(CliDeadLetters, UsageErrorsExit2) {
  EXPECT_EQ(outbox_r({"dead-letters", "replay"}).exit_code, 2);
  EXPECT_EQ(outbox_r({"dead-letters", "replay", "e-1", "--all"}).exit_code, 2);
  EXPECT_EQ(outbox_r({"dead-letters", "e-1"}).exit_code, 2);
  EXPECT_EQ(outbox_r({"dead-letters", "--bogus"}).exit_code, 2);
}

TEST_F(CliDeadLetters, RedisDownIsARuntimeFailure) {
  dead_letter(entry("e-1", "order-1", 1));
  auto where = redis_.endpoint().to_string();
  redis_.stop();
  auto r = outbox_r({"dead-letters"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, testing::HasSubstr("Redis"));
  EXPECT_THAT(r.err, testing::HasSubstr(where));
  auto replay = outbox_r({"dead-letters", "replay", "--all"});
  EXPECT_EQ(replay.exit_code, 1);
  EXPECT_THAT(replay.err, testing::HasSubstr("Redis"));
}

} // namespace
} // namespace outbox::test
