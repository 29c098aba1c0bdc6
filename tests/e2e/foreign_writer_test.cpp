#include "support/fast_config.hpp"
#include "support/pg_server.hpp"
#include "support/process.hpp"
#include "support/redis_server.hpp"
#include "support/temp_dir.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <string>
#include <vector>

// A writer in another language retries the way SQL lets it: docs/postgres.md's
// idioms (outbox_append with an event_id, INSERT ... ON CONFLICT DO
// NOTHING), sent twice through psql, the real client. A retry writes
// nothing and spends no seq, so the relays and the inbox see seqs 1, 2, 3
// and `outbox verify` finds nothing out of order.

namespace outbox::test {
namespace {

class E2EForeignWriter : public ::testing::Test {
protected:
  void SetUp() override {
    std::ofstream{config_} << fast_config({});
    auto init = outbox({"init"});
    ASSERT_EQ(init.exit_code, 0) << init.err;
  }

  std::vector<std::string> common() const {
    return {"--db",     pg_.uri(), "--redis", redis_.endpoint().to_string(),
            "--config", config_};
  }

  process_result outbox(std::vector<std::string> args) const {
    auto c = common();
    args.insert(args.end(), c.begin(), c.end());
    return run_outbox(args, dir_.path().string());
  }

  /// psql on the outbox database, stopping at the first error; the
  /// result's text is unaligned and without headers.
  process_result psql(const std::string& sql) const {
    return run_process({"/usr/bin/psql", pg_.uri(), "-X", "-q", "-A", "-t",
                        "-v", "ON_ERROR_STOP=1", "-c", sql},
                       dir_.path().string());
  }

  /// What psql printed, its last newline removed.
  std::string query(const std::string& sql) const {
    auto r = psql(sql);
    EXPECT_EQ(r.exit_code, 0) << sql << "\n" << r.err;
    auto out = r.out;
    while (!out.empty() && out.back() == '\n')
      out.pop_back();
    return out;
  }

  temp_dir dir_{"outbox-foreign"};
  std::string config_ = dir_.file("run.json");
  pg_server pg_;
  redis_server redis_;
};

constexpr const char* paid_id = "0193a1e0-7c4e-7d2a-9f1b-2b6c1e4a5d10";
constexpr const char* shipped_id = "0193a1e0-7c4e-7d2a-9f1b-2b6c1e4a5d11";

TEST_F(E2EForeignWriter, RetriedAppendsWriteOnceAndSpendNoSeq) {
  // ON CONFLICT twice, then another event: seqs 1 and 2.
  const std::string insert_paid =
      std::string{"INSERT INTO outbox (event_id, aggregate_id, event_type,"
                  " payload) VALUES ('"} +
      paid_id + "', 'ext-1', 'OrderPaid', '{\"amount\": 5}')" +
      " ON CONFLICT (event_id) DO NOTHING";
  EXPECT_EQ(query(insert_paid), "");
  EXPECT_EQ(query(insert_paid), "");
  EXPECT_EQ(query("SELECT seq FROM outbox_append('ext-1', 'OrderNoted',"
                  " '{}')"),
            "2");

  // outbox_append given an event_id: the second call returns the first
  // row, and the seq after it is 4, not 5.
  auto append_shipped = std::string{"SELECT seq FROM outbox_append('ext-1',"
                                    " 'OrderShipped', '{}', '"} +
                        shipped_id + "')";
  EXPECT_EQ(query(append_shipped), "3");
  EXPECT_EQ(query(append_shipped), "3");
  EXPECT_EQ(query(std::string{"SELECT replayed FROM outbox_append_once("
                              "'ext-1', 'OrderShipped', '{}', '"} +
                  shipped_id + "')"),
            "t");
  EXPECT_EQ(query("SELECT seq FROM outbox_append('ext-1', 'OrderClosed',"
                  " '{}')"),
            "4");

  // The same id naming another event is refused, and spends nothing.
  auto other = psql(std::string{"SELECT * FROM outbox_append('ext-2',"
                                " 'OrderPaid', '{}', '"} +
                    paid_id + "')");
  EXPECT_NE(other.exit_code, 0);
  EXPECT_THAT(other.err, testing::HasSubstr("already names OrderPaid of"));
  EXPECT_EQ(query("SELECT count(*) FROM aggregate_heads"
                  " WHERE aggregate_id = 'ext-2'"),
            "0");
  EXPECT_EQ(query("SELECT string_agg(seq::text, ',' ORDER BY seq) FROM"
                  " outbox WHERE aggregate_id = 'ext-1'"),
            "1,2,3,4");
  EXPECT_EQ(query("SELECT last_seq FROM aggregate_heads"
                  " WHERE aggregate_id = 'ext-1'"),
            "4");

  // An OrderPlaced the consumers would dead-letter is refused at write
  // time, through outbox_append as through a plain INSERT.
  for (const char* sql :
       {"SELECT * FROM outbox_append('cust-bad-1', 'OrderPlaced',"
        " '{\"sku\": \"kiwi\"}')",
        "INSERT INTO outbox (aggregate_id, event_type, payload) VALUES"
        " ('cust-bad-1', 'OrderPlaced', '{\"sku\": \"kiwi\", \"qty\": 0}')"}) {
    auto bad = psql(sql);
    EXPECT_NE(bad.exit_code, 0) << sql;
    EXPECT_THAT(bad.err,
                testing::HasSubstr("an OrderPlaced the consumers would refuse: "
                                   "payload.qty must be an integer >= 1"));
  }
  EXPECT_EQ(query("SELECT count(*) FROM outbox"
                  " WHERE aggregate_id = 'cust-bad-1'"),
            "0");

  // Delivered in order, once each; verify passes.
  auto r = outbox({"run", "--relays", "1", "--consumers", "1", "--orders", "0",
                   "--until-drained", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto report = nlohmann::json::parse(r.out);
  EXPECT_EQ(report.at("order_violations"), 0) << report.dump(2);
  EXPECT_EQ(report.at("duplicates_absorbed"), 0) << report.dump(2);
  auto verify = outbox({"verify", "--json"});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
  // Parsed into a name first: a range-for over a member of a temporary
  // would read a freed object.
  auto checks = nlohmann::json::parse(verify.out);
  for (const auto& check : checks.at("checks"))
    EXPECT_EQ(check.at("result"), "passed") << check.dump();
}

} // namespace
} // namespace outbox::test
