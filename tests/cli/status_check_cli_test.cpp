#include "broker/relay_presence.hpp"
#include "support/refused_command.hpp"
#include "tests/cli/audit_fixture.hpp"

#include <gmock/gmock.h>
#include <hiredis/hiredis.h>
#include <string>
#include <vector>

// `outbox status --check`: a health verdict in the exit code, for probes
// and scripts.

namespace outbox::test {
namespace {

using CliStatusCheck = CliAudit;

std::vector<std::string> problems_of(const nlohmann::json& out) {
  return out.at("health").at("problems").get<std::vector<std::string>>();
}

TEST_F(CliStatusCheck, HealthyPipelineExitsZero) {
  place("apple", 2);
  relay_all();
  consume_all();
  auto r = outbox_r({"status", "--check", "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  auto out = json_of(r);
  EXPECT_TRUE(out.at("health").at("ok").get<bool>());
  EXPECT_EQ(out.at("health").at("max_unpublished_age_ms"), 300'000)
      << "the documented default, 5m";
  auto text = outbox_r({"status", "--check"});
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, testing::HasSubstr("HEALTH  ok"));
}

TEST_F(CliStatusCheck, FailedRowsAreUnhealthy) {
  place("apple", 2);
  ASSERT_FALSE(fail_next_row("broker refused").empty());
  auto r = outbox_r({"status", "--check", "--json"});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  auto problems = problems_of(json_of(r));
  ASSERT_EQ(problems.size(), 1u) << r.out;
  EXPECT_THAT(problems[0], testing::HasSubstr("1 FAILED row"));
  // Without --check a FAILED row is shown, not judged.
  EXPECT_EQ(outbox_r({"status"}).exit_code, 0);
}

TEST_F(CliStatusCheck, AnOldUnpublishedRowIsUnhealthy) {
  place("apple", 2);
  // A relay process runs (it is just not publishing): only the age counts.
  broker::relay_presence{conn_, names_.relay_processes()}.note("by-hand", 1,
                                                               60'000);
  {
    // Ten minutes old, past the default threshold of five.
    SQLite::Database db{db_path(), SQLite::OPEN_READWRITE};
    db.exec("UPDATE outbox SET created_at = created_at - 600000");
  }
  auto r = outbox_r({"status", "--check", "--json"});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  auto problems = problems_of(json_of(r));
  ASSERT_EQ(problems.size(), 1u) << r.out;
  EXPECT_THAT(problems[0], testing::HasSubstr("oldest unpublished row is 10m"));
  auto text = outbox_r({"status", "--check"});
  EXPECT_EQ(text.exit_code, 1);
  EXPECT_THAT(text.out,
              testing::HasSubstr("HEALTH  the oldest unpublished row"));
  // A threshold above its age: healthy again.
  auto relaxed =
      outbox_r({"status", "--check", "--max-unpublished-age", "15m"});
  EXPECT_EQ(relaxed.exit_code, 0) << relaxed.out;
}

TEST_F(CliStatusCheck, RedisDownIsUnhealthy) {
  place("apple", 2);
  redis_.stop();
  auto r = outbox_r({"status", "--check", "--json"});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  auto problems = problems_of(json_of(r));
  ASSERT_EQ(problems.size(), 1u) << r.out;
  EXPECT_EQ(problems[0].rfind("Redis unavailable", 0), 0u) << problems[0];
}

/// One order whose effect fails at the consumer (its sku's reservation is
/// not a number), so its entry waits in the dead-letter list.
class CliStatusCheckDeadLetters : public CliAudit {
protected:
  void SetUp() override {
    conn_.command({"HSET", names_.reserved, "kiwi", "not a number"});
    auto placed =
        outbox_r({"place-order", "--sku", "kiwi", "--qty", "1", "--json"});
    ASSERT_EQ(placed.exit_code, 0) << placed.err;
    event_id_ = json_of(placed).at("event_id");
    relay_all();
    consume_all();
    ASSERT_EQ(conn_.command({"LLEN", names_.dead_letter})->integer, 1);
  }

  /// status --check --json: its exit code and its problems.
  std::pair<int, std::vector<std::string>> check() {
    auto r = outbox_r({"status", "--check", "--json"});
    return {r.exit_code, problems_of(json_of(r))};
  }

  std::string event_id_;
};

TEST_F(CliStatusCheckDeadLetters, AWaitingDeadLetterIsUnhealthyUntilDropped) {
  auto [code, problems] = check();
  EXPECT_EQ(code, 1);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_THAT(problems[0],
              testing::HasSubstr("1 dead-lettered entry waits in the "
                                 "dead-letter list"));
  auto text = outbox_r({"status", "--check"});
  EXPECT_EQ(text.exit_code, 1);
  EXPECT_THAT(text.out, testing::HasSubstr("HEALTH  1 dead-lettered entry"));
  // Without --check it is shown, not judged.
  EXPECT_EQ(outbox_r({"status"}).exit_code, 0);

  auto dropped = outbox_r(
      {"dead-letters", "drop", event_id_, "--reason", "kiwi is retired"});
  ASSERT_EQ(dropped.exit_code, 0) << dropped.err;
  auto after = outbox_r({"status", "--check", "--json"});
  EXPECT_EQ(after.exit_code, 0) << after.out;
  auto out = json_of(after);
  EXPECT_EQ(out.at("redis").at("dead_letter"), 0);
  EXPECT_EQ(out.at("redis").at("dead_letter_dropped"), 1);
  EXPECT_THAT(outbox_r({"status"}).out,
              testing::ContainsRegex("\ndead letters dropped +1\n"));
}

TEST_F(CliStatusCheckDeadLetters, AReplayMakesItHealthyAgain) {
  conn_.command({"HSET", names_.reserved, "kiwi", "0"}); // the cause, fixed
  auto replayed = outbox_r({"dead-letters", "replay", event_id_});
  ASSERT_EQ(replayed.exit_code, 0) << replayed.err;
  // Back in its queue, where nobody consumes it yet: for a moment only.
  auto [code, problems] = check();
  EXPECT_EQ(code, 0) << testing::PrintToString(problems);
  consume_all();
  EXPECT_EQ(check().first, 0);
  EXPECT_EQ(
      broker::reply_text(*conn_.command({"HGET", names_.reserved, "kiwi"})),
      "1");
}

TEST_F(CliStatusCheck, FlagsThatNeedAnotherAreRefused) {
  place("apple", 2);
  const std::vector<refused_command> cases{
      {{"status", "--max-unpublished-age", "1m"}, "only applies with --check"},
      {{"status", "--interval", "1"}, "only applies with --watch"},
      {{"status", "--check", "--watch"}, "cannot be combined with --watch"},
      {{"status", "--check", "--max-unpublished-age", "soon"},
       "expected a duration"}};
  for (const auto& c : cases) {
    auto r = outbox_r(c.args);
    expect_refused(c, r);
    EXPECT_EQ(r.out, "") << "nothing done";
  }
}

} // namespace
} // namespace outbox::test
