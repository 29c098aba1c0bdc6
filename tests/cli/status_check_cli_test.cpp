#include "cli/audit_fixture.hpp"

#include <gmock/gmock.h>
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

TEST_F(CliStatusCheck, FlagsThatNeedAnotherAreRefused) {
  place("apple", 2);
  struct refused {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<refused> cases{
      {{"status", "--max-unpublished-age", "1m"}, "only applies with --check"},
      {{"status", "--interval", "1"}, "only applies with --watch"},
      {{"status", "--check", "--watch"}, "cannot be combined with --watch"},
      {{"status", "--check", "--max-unpublished-age", "soon"},
       "expected a duration"}};
  for (const auto& c : cases) {
    auto r = outbox_r(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args.back() << ": " << r.err;
    EXPECT_THAT(r.err, testing::HasSubstr(c.says));
    EXPECT_EQ(r.out, "") << "nothing done";
  }
}

} // namespace
} // namespace outbox::test
