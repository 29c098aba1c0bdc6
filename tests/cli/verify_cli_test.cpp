#include "tests/cli/audit_fixture.hpp"

#include <gmock/gmock.h>
#include <hiredis/hiredis.h>
#include <set>
#include <string>
#include <variant>
#include <vector>

// `outbox verify` and `outbox retry` against a private Redis.

namespace outbox::test {
namespace {

TEST_F(CliAudit, ReadCommandsRefuseAMissingDatabase) {
  std::vector<std::vector<std::string>> commands{
      {"status"}, {"verify"}, {"retry", "--all-failed"}};
  for (const auto& command : commands) {
    auto r = outbox_r(command);
    EXPECT_EQ(r.exit_code, 1) << command[0] << ": " << r.err;
    EXPECT_THAT(r.err, testing::HasSubstr("outbox init"));
  }
  EXPECT_FALSE(std::filesystem::exists(db_path()));
}

TEST_F(CliAudit, VerifyPassesAfterAFullPass) {
  place("apple", 2);
  place("pear", 5);
  place("apple", 1);
  relay_all();
  consume_all();
  auto r = outbox_r({"verify", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto out = json_of(r);
  EXPECT_TRUE(out.at("ok").get<bool>());
  EXPECT_EQ(out.at("published"), 3);
  EXPECT_EQ(out.at("processed"), 3);
  for (const auto& check : out.at("checks"))
    EXPECT_EQ(check.at("result"), "passed") << check.dump();
}

TEST_F(CliAudit, VerifyFailsOnAWrongReservation) {
  place("apple", 2);
  relay_all();
  consume_all();
  conn_.command({"HINCRBY", names_.reserved, "apple", "1"});
  auto r = outbox_r({"verify", "--json"});
  EXPECT_EQ(r.exit_code, 1);
  auto out = json_of(r);
  EXPECT_FALSE(out.at("ok").get<bool>());
  bool named = false;
  for (const auto& check : out.at("checks"))
    if (check.at("name") == "reserved_matches") {
      EXPECT_EQ(check.at("result"), "failed");
      EXPECT_NE(check.at("detail").get<std::string>().find("apple"),
                std::string::npos);
      named = true;
    }
  EXPECT_TRUE(named);
}

TEST_F(CliAudit, VerifyFailsOnAnOrphanEffect) {
  place("apple", 2);
  conn_.command({"HSET", names_.processed, "not-an-outbox-event", "{}"});
  auto r = outbox_r({"verify"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.out, testing::HasSubstr("not-an-outbox-event"));
}

TEST_F(CliAudit, VerifyAccountsForQueuedEventsAndNamesThoseRemovedByHand) {
  constexpr int published = 20;
  for (int i = 0; i < published; ++i)
    place("apple", 1);
  relay_all();
  auto waiting = outbox_r({"verify", "--json"});
  EXPECT_EQ(waiting.exit_code, 0) << waiting.out;
  // Named: a range-for over json_of(r).at(...) would iterate a temporary
  // already destroyed (ASan: heap-use-after-free).
  auto report = json_of(waiting);
  EXPECT_EQ(report.at("checks").at(0).at("name"), "published_processed");
  EXPECT_EQ(report.at("checks").at(0).at("detail"),
            "0 of 20 published events processed; 20 queued");

  // Half the entries go, as a Redis that lost writes or an operator's
  // mistake leaves it: the queues are not drained, and still each of those
  // events is named as lost.
  std::set<std::string> removed;
  for (std::size_t p = 0; p < names_.partitions && removed.size() < 10; ++p)
    while (removed.size() < 10) {
      auto entry = conn_.command({"LPOP", names_.partition(p)});
      if (entry->type != REDIS_REPLY_STRING)
        break;
      auto decoded = broker::decode(broker::reply_text(*entry));
      ASSERT_TRUE(std::holds_alternative<broker::event_entry>(decoded));
      removed.insert(std::get<broker::event_entry>(decoded).event_id);
    }
  ASSERT_EQ(removed.size(), 10U);
  auto r = outbox_r({"verify"});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_THAT(r.out, testing::HasSubstr(
                         "failed  published_processed: 10 of 20 published "
                         "events lost: not applied, in no queue, "
                         "processing list or dead-letter list, and dropped by "
                         "no decision (10 queued): "));
  EXPECT_THAT(r.out, testing::HasSubstr("VIOLATED"));
  auto json = json_of(outbox_r({"verify", "--json"}));
  std::string detail = json.at("checks").at(0).at("detail");
  auto named = detail.substr(detail.find("queued): ") + 9);
  int shown = 0;
  for (const auto& id : removed)
    shown += named.find(id) != std::string::npos ? 1 : 0;
  EXPECT_EQ(shown, 5) << "the first five of the ten removed are named: "
                      << detail;
}

TEST_F(CliAudit, VerifyJsonStillPrintsItsJsonWhenRedisIsDown) {
  place("apple", 2);
  redis_.stop();
  auto r = outbox_r({"verify", "--json"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  auto out = json_of(r);
  EXPECT_FALSE(out.at("ok").get<bool>());
  EXPECT_EQ(out.at("error").at("store"), "redis");
  EXPECT_FALSE(out.at("error").at("message").get<std::string>().empty());
  EXPECT_TRUE(out.at("checks").empty()) << "no check could run";
  // The reason on stderr too, as without --json.
  EXPECT_THAT(r.err, testing::HasSubstr("outbox: Redis error"));
}

TEST_F(CliAudit, VerifyJsonStillPrintsItsJsonWithoutADatabase) {
  auto r = outbox_r({"verify", "--json"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  auto out = json_of(r);
  EXPECT_FALSE(out.at("ok").get<bool>());
  EXPECT_EQ(out.at("error").at("store"), "database");
  EXPECT_NE(
      out.at("error").at("message").get<std::string>().find("outbox init"),
      std::string::npos);
}

TEST_F(CliAudit, RetryRefusesUnknownIdsAndRetriesFailedRows) {
  place("apple", 2);
  auto unknown = outbox_r({"retry", "no-such-event"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_THAT(unknown.err, testing::HasSubstr("no-such-event"));
  auto neither = outbox_r({"retry"});
  EXPECT_EQ(neither.exit_code, 2);

  // Make the row FAILED the way a relay would: claims that never ack.
  auto event_id = fail_next_row("broker refused");
  ASSERT_FALSE(event_id.empty());
  auto failed = outbox_r({"status", "--json"});
  ASSERT_EQ(json_of(failed).at("outbox").at("by_status").at("FAILED"), 1);
  auto r = outbox_r({"retry", event_id});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json_of(r).at("retried"), 1);
  auto after = outbox_r({"status", "--json"});
  EXPECT_EQ(json_of(after).at("outbox").at("by_status").at("PENDING"), 1);
}

} // namespace
} // namespace outbox::test
