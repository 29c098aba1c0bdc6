#include "support/pipeline_keys.hpp"
#include "tests/cli/hand_rows.hpp"
#include "tests/cli/initialised_fixture.hpp"

#include "broker/connection.hpp"
#include "broker/keys.hpp"
#include "storage/types.hpp"

#include <SQLiteCpp/SQLiteCpp.h>
#include <gmock/gmock.h>
#include <hiredis/hiredis.h>
#include <nlohmann/json.hpp>

#include <string>

namespace outbox::test {
namespace {

constexpr storage::millis day = 24 * 60 * 60 * 1000;

/// `outbox trim` against a private Redis, on a state written by hand so the
/// ages are days, as in production: rows in the outbox and the dedup
/// records the inbox script would have written for them.
class CliTrim : public initialised_fixture {
protected:
  /// An outbox row; published_at only for PUBLISHED rows.
  void row(const std::string& event_id, const std::string& aggregate_id,
           int seq, const std::string& status, storage::millis at,
           const std::string& sku = "", int qty = 0,
           const std::string& event_type = "OrderPaid") {
    hand_row r{event_id, aggregate_id, seq, status, at};
    if (sku.empty())
      r.event_type = event_type;
    else
      r.payload = nlohmann::json{{"sku", sku}, {"qty", qty}}.dump();
    insert_row(db_path(), r);
  }

  /// The dedup record the inbox writes, applied at `at`, with its effect.
  void record(const std::string& event_id, const std::string& aggregate_id,
              int seq, storage::millis at, const std::string& sku = "",
              int qty = 0) {
    nlohmann::json r{{"event_type", sku.empty() ? "OrderPaid" : "OrderPlaced"},
                     {"aggregate_id", aggregate_id},
                     {"seq", seq},
                     {"at", at}};
    if (!sku.empty()) {
      r["sku"] = sku;
      r["qty"] = qty;
      conn_.command({"HINCRBY", names_.reserved, sku, std::to_string(qty)});
    }
    conn_.command({"HSET", names_.processed, event_id, r.dump()});
    conn_.command(
        {"HSET", names_.aggregate_seq, aggregate_id, std::to_string(seq)});
  }

  bool has_record(const std::string& event_id) {
    return conn_.command({"HEXISTS", names_.processed, event_id})->integer == 1;
  }

  nlohmann::json verify() {
    auto r = outbox_r({"verify", "--json"});
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    return json_of(r);
  }

  static std::string detail(const nlohmann::json& v, const std::string& name) {
    for (const auto& c : v.at("checks"))
      if (c.at("name") == name)
        return c.at("detail");
    return "";
  }

  broker::keys names_ = default_pipeline_keys();
  storage::millis now_ = storage::wall_clock_now();
};

} // namespace

TEST_F(CliTrim, ForgetsOldRecordsOfDeliveredEventsAndVerifyStillHolds) {
  // o-1: seq 1 purged long ago (record only; seq 2 remains, so the purge
  // rule holds), seq 2 published 10 days ago.
  record("ev-1", "o-1", 1, now_ - 10 * day, "apple", 2);
  row("ev-2", "o-1", 2, "PUBLISHED", now_ - 10 * day);
  record("ev-2", "o-1", 2, now_ - 10 * day);
  // o-2: published an hour ago: younger than 7 days.
  row("ev-3", "o-2", 1, "PUBLISHED", now_ - day / 24, "pear", 1);
  record("ev-3", "o-2", 1, now_ - day / 24, "pear", 1);
  // o-3: applied long ago but its row ended FAILED: `outbox retry` would
  // deliver it again, so its record must stay.
  row("ev-4", "o-3", 1, "FAILED", now_ - 10 * day, "fig", 4);
  record("ev-4", "o-3", 1, now_ - 10 * day, "fig", 4);
  EXPECT_TRUE(verify().at("ok"));

  auto r = outbox_r(
      {"trim", "--processed-older-than", "7d", "--batch", "1", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto out = json_of(r);
  EXPECT_EQ(out.at("scanned"), 4);
  EXPECT_EQ(out.at("trimmed"), 2);
  EXPECT_EQ(out.at("batches"), 2) << "one record per call with --batch 1";
  EXPECT_EQ(out.at("kept_young"), 1);
  EXPECT_EQ(out.at("kept_unpublished"), 1);
  EXPECT_EQ(out.at("kept_queued"), 0);
  EXPECT_FALSE(has_record("ev-1"));
  EXPECT_FALSE(has_record("ev-2"));
  EXPECT_TRUE(has_record("ev-3"));
  EXPECT_TRUE(has_record("ev-4"));

  auto after = verify();
  EXPECT_TRUE(after.at("ok")) << after.dump();
  EXPECT_NE(detail(after, "published_processed").find("1 published before"),
            std::string::npos)
      << after.dump();

  auto again = outbox_r({"trim", "--processed-older-than", "7d"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_THAT(again.out, testing::HasSubstr("trimmed 0 of 2"));
}

TEST_F(CliTrim, PurgeThenTrimCannotExcuseALoss) {
  // o-1: seqs 1 and 2 published and applied 40 days ago, seq 3 20 days
  // ago (applied then too); seq 4 was published 10 days ago but never reached
  // Redis (a loss).
  row("ev-1", "o-1", 1, "PUBLISHED", now_ - 40 * day, "apple", 2);
  record("ev-1", "o-1", 1, now_ - 40 * day, "apple", 2);
  row("ev-2", "o-1", 2, "PUBLISHED", now_ - 40 * day);
  record("ev-2", "o-1", 2, now_ - 40 * day);
  row("ev-3", "o-1", 3, "PUBLISHED", now_ - 20 * day, "", 0, "OrderShipped");
  record("ev-3", "o-1", 3, now_ - 20 * day);
  row("lost-4", "o-1", 4, "PUBLISHED", now_ - 10 * day, "", 0, "ItemNoted");
  auto names_the_loss = [this](const char* when) {
    auto r = outbox_r({"verify", "--json"});
    EXPECT_EQ(r.exit_code, 1) << when << ": " << r.out;
    auto v = json_of(r);
    EXPECT_FALSE(v.at("ok")) << when;
    EXPECT_THAT(detail(v, "published_processed"), testing::EndsWith(": lost-4"))
        << when << ": " << v.dump();
  };
  names_the_loss("before retention");

  // The routine of docs/data-model.md ("Retention"), with a purge window longer
  // than the trim's: purge deletes seqs 1 and 2, trim then forgets the records
  // of all three applied seqs (of rows purged or published before its cutoff).
  auto purged = outbox_r({"purge", "--published-older-than", "30d", "--json"});
  ASSERT_EQ(purged.exit_code, 0) << purged.err;
  EXPECT_EQ(json_of(purged).at("deleted"), 2);
  auto trimmed = outbox_r({"trim", "--processed-older-than", "7d", "--json"});
  ASSERT_EQ(trimmed.exit_code, 0) << trimmed.err;
  EXPECT_EQ(json_of(trimmed).at("trimmed"), 3);
  names_the_loss("after purge then trim");

  // And the next round, trim before purge: purge now deletes seq 3.
  auto again = outbox_r({"trim", "--processed-older-than", "7d"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  auto purged_again =
      outbox_r({"purge", "--published-older-than", "15d", "--json"});
  ASSERT_EQ(purged_again.exit_code, 0) << purged_again.err;
  EXPECT_EQ(json_of(purged_again).at("deleted"), 1);
  names_the_loss("after a second round");
}

TEST_F(CliTrim, KeepsTheRecordOfAnEventStillInAQueue) {
  row("ev-1", "o-1", 1, "PUBLISHED", now_ - 10 * day, "apple", 2);
  record("ev-1", "o-1", 1, now_ - 10 * day, "apple", 2);
  // A copy still waits (a consumer died holding it, say): delivered again,
  // it must meet its record and be a duplicate.
  nlohmann::json entry{{"event_id", "ev-1"},
                       {"aggregate_id", "o-1"},
                       {"seq", 1},
                       {"event_type", "OrderPlaced"},
                       {"payload", {{"sku", "apple"}, {"qty", 2}}},
                       {"committed_at", now_ - 10 * day}};
  conn_.command({"RPUSH", names_.processing_prefix + names_.queue + "/c-1",
                 entry.dump()});
  auto r = outbox_r({"trim", "--processed-older-than", "1d", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json_of(r).at("kept_queued"), 1);
  EXPECT_EQ(json_of(r).at("trimmed"), 0);
  EXPECT_TRUE(has_record("ev-1"));
}

TEST_F(CliTrim, KeepsARecordNoPurgeAccountsFor) {
  // No row and no saved head: another database, or a row never written
  // here. Nothing says a purge removed it, so its record stays.
  record("ev-x", "o-9", 1, now_ - 10 * day, "apple", 2);
  // o-1 keeps seq 2: a record of seq 3 with no row is not purged history.
  row("ev-2", "o-1", 2, "PENDING", now_ - 10 * day);
  record("ev-3", "o-1", 3, now_ - 10 * day);
  auto r = outbox_r({"trim", "--processed-older-than", "7d", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json_of(r).at("kept_other"), 2);
  EXPECT_EQ(json_of(r).at("trimmed"), 0);
  EXPECT_TRUE(has_record("ev-x"));
  EXPECT_TRUE(has_record("ev-3"));
}

TEST_F(CliTrim, RefusesBadInputNamingIt) {
  auto bad = outbox_r({"trim", "--processed-older-than", "7 days"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, testing::HasSubstr("'7 days'"));

  auto batch =
      outbox_r({"trim", "--processed-older-than", "7d", "--batch", "0"});
  EXPECT_EQ(batch.exit_code, 2);
  EXPECT_THAT(batch.err, testing::HasSubstr("--batch"));

  // The defaults: lease.ttl_ms 10 s x lease.max_attempts 8.
  auto short_window = outbox_r({"trim", "--processed-older-than", "1m"});
  EXPECT_EQ(short_window.exit_code, 2);
  EXPECT_THAT(short_window.err, testing::HasSubstr("redelivery window"));
  EXPECT_THAT(short_window.err, testing::HasSubstr("80s"));

  auto no_redis = outbox({"trim", "--processed-older-than", "7d"},
                         {"--redis", "127.0.0.1:1"});
  EXPECT_EQ(no_redis.exit_code, 1);
  EXPECT_THAT(no_redis.err, testing::HasSubstr("Redis"));
}

} // namespace outbox::test

namespace outbox::test {
namespace {

/// A consumer's own database (consumer.sink): its inbox rows go with the
/// Redis records they answer for, under the same rule, never before them.
TEST_F(CliTrim, TrimsTheSinksInboxRowsOnceTheirRecordsAreGone) {
  auto sink = dir_.file("shop.db");
  ASSERT_EQ(outbox_r({"init", "--sink", sink}).exit_code, 0);
  auto config = write_config(
      "sink.json", nlohmann::json{{"consumer", {{"sink", sink}}}}.dump());
  auto inbox_row = [&](const std::string& event_id, const std::string& order,
                       storage::millis at) {
    SQLite::Database db{sink, SQLite::OPEN_READWRITE};
    SQLite::Statement insert{db, "INSERT INTO outbox_inbox VALUES"
                                 " ('pipeline:', ?, ?, 1, 'OrderPaid', ?)"};
    insert.bind(1, event_id);
    insert.bind(2, order);
    insert.bind(3, at);
    insert.exec();
  };
  // Delivered long ago, its record trimmed in this run first: both go.
  row("ev-1", "o-1", 1, "PUBLISHED", now_ - 10 * day);
  record("ev-1", "o-1", 1, now_ - 10 * day);
  inbox_row("ev-1", "o-1", now_ - 10 * day);
  // Its row FAILED (a retry delivers it again): record and row stay.
  row("ev-2", "o-2", 1, "FAILED", now_ - 10 * day);
  record("ev-2", "o-2", 1, now_ - 10 * day);
  inbox_row("ev-2", "o-2", now_ - 10 * day);
  // Committed in the sink, never recorded in Redis (the consumer died in
  // between): Redis's applied seq does not cover it, its row must absorb
  // the redelivery.
  row("ev-3", "o-3", 1, "PUBLISHED", now_ - 10 * day);
  inbox_row("ev-3", "o-3", now_ - 10 * day);
  // Covered, its record trimmed, but a copy still in a processing list.
  row("ev-5", "o-5", 1, "PUBLISHED", now_ - 10 * day);
  inbox_row("ev-5", "o-5", now_ - 10 * day);
  conn_.command({"HSET", names_.aggregate_seq, "o-5", "1"});
  nlohmann::json entry{{"event_id", "ev-5"},
                       {"aggregate_id", "o-5"},
                       {"seq", 1},
                       {"event_type", "OrderPaid"},
                       {"payload", nlohmann::json::object()}};
  conn_.command({"RPUSH", names_.processing_prefix + names_.queue + "/c-1",
                 entry.dump()});
  // Young: not looked at.
  row("ev-4", "o-4", 1, "PUBLISHED", now_ - day / 24);
  inbox_row("ev-4", "o-4", now_ - day / 24);

  auto r = outbox_r(
      {"trim", "--processed-older-than", "7d", "--json", "--config", config});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto out = json_of(r).at("sink");
  EXPECT_EQ(out.at("scanned"), 4) << out.dump();
  EXPECT_EQ(out.at("trimmed"), 1);
  EXPECT_EQ(out.at("kept_recorded"), 1);
  EXPECT_EQ(out.at("kept_uncovered"), 1);
  EXPECT_EQ(out.at("kept_queued"), 1);
  SQLite::Database db{sink};
  SQLite::Statement left{db, "SELECT group_concat(event_id, ',') FROM"
                             " (SELECT event_id FROM outbox_inbox ORDER BY 1)"};
  left.executeStep();
  EXPECT_EQ(left.getColumn(0).getString(), "ev-2,ev-3,ev-4,ev-5");
}

} // namespace
} // namespace outbox::test
