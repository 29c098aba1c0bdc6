#include "support/pipeline_keys.hpp"
#include "tests/faults/fault_fixture.hpp"

#include "broker/keys.hpp"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <gmock/gmock.h>
#include <hiredis/hiredis.h>

#include <chrono>
#include <set>
#include <string>

namespace outbox::test {
namespace {

using json = nlohmann::json;

/// Scenario: an effect that cannot apply. `inventory.reserved[sku-7]`
/// holds a non-integer, so HINCRBY fails for every OrderPlaced of sku-7.
/// Each such entry must go to the dead letters, applied nowhere, while the
/// rest of its batch, its partition and its own aggregate's later events
/// go on; a bounded run must end (naming what is missing), and `outbox
/// verify` must name the bad value instead of crashing on it.
using FaultPoisonEffect = fault_fixture;

TEST_F(FaultPoisonEffect, APoisonEffectIsDeadLetteredAndTheRestMovesOn) {
  broker::keys names = default_pipeline_keys();
  redis().command({"HSET", names.reserved, "sku-7", "not a number"});

  auto started = std::chrono::steady_clock::now();
  auto r = run_orders(2, 2, 300, 90'000);
  EXPECT_LT(std::chrono::steady_clock::now() - started,
            std::chrono::seconds(60))
      << "the run waited on the poison";
  auto poisoned = count("SELECT COUNT(*) FROM orders WHERE sku = 'sku-7'");
  ASSERT_GT(poisoned, 0) << "no order of sku-7 with this seed";

  // The run ends, and says why it is not clean: published events are in
  // the dead letters, not processed.
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  auto report = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << r.out << r.err;
  // A copy of a poisoned event (a relay's lease expired on a slow machine)
  // meets the same failure: it is set aside too, as a second record.
  EXPECT_GE(report.value("dead_lettered", -1), poisoned) << report.dump(2);
  EXPECT_EQ(report.value("order_violations", -1), 0);
  EXPECT_EQ(report.value("failed_rows", -1), 0);
  EXPECT_NE(report.at("violations").dump().find("dead-letter"),
            std::string::npos)
      << report.at("violations").dump();
  EXPECT_THAT(r.err, testing::HasSubstr("effect failed"));

  // Every other event was applied: the partitions moved on, including the
  // poisoned orders' own follow-ups, in order.
  auto conn = redis();
  auto processed = conn.command({"HLEN", names.processed})->integer;
  EXPECT_EQ(processed, count("SELECT COUNT(*) FROM outbox") - poisoned);
  auto listed =
      run_outbox({"dead-letters", "--json", "--redis",
                  redis_->endpoint().to_string(), "--config", config_path_},
                 dir_.path().string());
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  std::set<std::string> set_aside;
  auto letters = json::parse(listed.out).at("dead_letters");
  for (const auto& letter : letters)
    set_aside.insert(letter.at("event_id").get<std::string>());
  std::set<std::string> poisoned_events;
  {
    SQLite::Database db{db_path_, SQLite::OPEN_READONLY};
    SQLite::Statement q{db, "SELECT p.event_id FROM outbox p JOIN orders o ON"
                            " p.aggregate_id = 'order-' || o.id WHERE"
                            " o.sku = 'sku-7' AND p.event_type ="
                            " 'OrderPlaced'"};
    while (q.executeStep())
      poisoned_events.insert(q.getColumn(0).getString());
  }
  EXPECT_EQ(set_aside, poisoned_events) << listed.out;
  EXPECT_EQ(
      broker::reply_text(*conn.command({"HGET", names.reserved, "sku-7"})),
      "not a number")
      << "no partial effect";
  SQLite::Database db{db_path_, SQLite::OPEN_READONLY};
  SQLite::Statement heads{
      db, "SELECT 'order-' || o.id, (SELECT MAX(seq) FROM outbox WHERE "
          "aggregate_id = 'order-' || o.id) FROM orders o WHERE o.sku = "
          "'sku-7'"};
  while (heads.executeStep()) {
    auto aggregate = heads.getColumn(0).getString();
    auto applied = conn.command({"HGET", names.aggregate_seq, aggregate});
    EXPECT_EQ(broker::reply_text(*applied),
              std::to_string(heads.getColumn(1).getInt64()))
        << aggregate << ": its later events did not move on";
  }

  // verify names the bad value and the missing events; it never crashes.
  auto verify =
      run_outbox({"verify", "--json", "--db", db_path_, "--redis",
                  redis_->endpoint().to_string(), "--config", config_path_},
                 dir_.path().string());
  EXPECT_EQ(verify.exit_code, 1) << verify.out << verify.err;
  auto verdict = json::parse(verify.out, nullptr, false);
  ASSERT_FALSE(verdict.is_discarded()) << verify.out << verify.err;
  EXPECT_THAT(verify.out, testing::HasSubstr(
                              "inventory.reserved[sku-7] is not an integer"));
  EXPECT_THAT(verify.err, testing::Not(testing::HasSubstr("stoll")));

  // The cause fixed, the dead letters replayed: each is applied once, late
  // on purpose (no order violation), and the pipeline adds up.
  conn.command({"HDEL", names.reserved, "sku-7"});
  auto replay =
      run_outbox({"dead-letters", "replay", "--all", "--json", "--redis",
                  redis_->endpoint().to_string(), "--config", config_path_},
                 dir_.path().string());
  ASSERT_EQ(replay.exit_code, 0) << replay.out << replay.err;
  EXPECT_EQ(json::parse(replay.out).at("count"), letters.size()) << replay.out;
  drain();
  auto check = finish("FaultPoisonEffect", 0);
  EXPECT_EQ(check.figures.order_violations, 0);
  EXPECT_GE(check.figures.dead_lettered, poisoned);
}

} // namespace
} // namespace outbox::test
