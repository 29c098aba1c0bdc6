#include "tests/cli/audit_fixture.hpp"
#include "tests/cli/status_tables.hpp"

#include <csignal>
#include <gmock/gmock.h>
#include <string>
#include <vector>

// `outbox status` against a private Redis: both stores in one view, the
// tables on a terminal, --watch, and a Redis that is down.

namespace outbox::test {
namespace {

TEST_F(CliAudit, StatusNamesTheConsumingProcess) {
  place("apple", 2);
  auto none = outbox_r({"status", "--json"});
  ASSERT_EQ(none.exit_code, 0) << none.err;
  EXPECT_TRUE(json_of(none).at("redis").at("consumers_lock").is_null());
  EXPECT_TRUE(table_titled(outbox_r({"status"}).out, "CONSUMER").empty());

  conn_.command({"SET", names_.consumer_lock(), "db1-4300@1796003181906#1",
                 "PX", "60000"});
  auto held = outbox_r({"status", "--json"});
  ASSERT_EQ(held.exit_code, 0) << held.err;
  auto lock = json_of(held).at("redis").at("consumers_lock");
  EXPECT_EQ(lock.at("holder"), "db1-4300@1796003181906#1");
  EXPECT_GT(lock.at("ttl_ms").get<std::int64_t>(), 50'000);
  EXPECT_LE(lock.at("ttl_ms").get<std::int64_t>(), 60'000);
  auto text = outbox_r({"status"});
  // Set by hand: no process noted itself, the holder is shown alone.
  auto table = table_titled(text.out, "CONSUMER PROCESS");
  ASSERT_EQ(table.size(), 2u) << text.out;
  expect_aligned(table);
  EXPECT_EQ(cells_of(table[1])[0].text, "db1-4300@1796003181906#1");

  // Set by hand without a ttl: it blocks every consumer process for good,
  // and status says so.
  conn_.command({"SET", names_.consumer_lock(), "by-hand"});
  auto stuck = outbox_r({"status"});
  auto row = row_of(table_titled(stuck.out, "CONSUMER PROCESS"), "by-hand");
  EXPECT_EQ(row, (std::vector<std::string>{"by-hand", "consuming", "?", "?",
                                           "never"}))
      << stuck.out;
}

TEST_F(CliAudit, StatusReportsBothStores) {
  place("apple", 2);
  place("pear", 1);
  relay_all();
  auto r = outbox_r({"status", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto out = json_of(r);
  EXPECT_EQ(out.at("outbox").at("orders"), 2);
  EXPECT_EQ(out.at("outbox").at("by_status").at("PUBLISHED"), 2);
  EXPECT_EQ(out.at("outbox").at("by_status").at("PENDING"), 0);
  std::int64_t queued = 0;
  for (const auto& [list, length] : out.at("redis").at("queues").items())
    queued += length.get<std::int64_t>();
  EXPECT_EQ(queued, 2);
  auto text = outbox_r({"status"});
  EXPECT_EQ(text.exit_code, 0);
  auto statuses = table_titled(text.out, "STATUS");
  EXPECT_EQ(row_of(statuses, "PUBLISHED"),
            (std::vector<std::string>{"PUBLISHED", "2"}))
      << text.out;
  EXPECT_EQ(row_of(statuses, "PENDING"),
            (std::vector<std::string>{"PENDING", "0"}))
      << text.out;
  auto totals = table_titled(text.out, "ORDERS");
  ASSERT_EQ(totals.size(), 2u) << text.out;
  EXPECT_EQ(cells_of(totals[1])[0].text, "2") << text.out;
  auto queues = table_titled(text.out, "QUEUE");
  ASSERT_EQ(queues.size(), 1 + names_.partitions) << text.out;
  std::int64_t shown_queued = 0;
  for (std::size_t i = 1; i < queues.size(); ++i)
    shown_queued += std::stoll(cells_of(queues[i])[1].text);
  EXPECT_EQ(shown_queued, 2) << text.out;
}

TEST_F(CliAudit, StatusTablesAreAlignedAndShowFailedRowsAndLeases) {
  // One row of each kind: FAILED (with a long, two-line error), PUBLISHED
  // and taken by a consumer that has not finished it, SENDING under a lease.
  place("apple", 2);
  const std::string error =
      "broker refused: entry of 2000000 bytes is over broker.max_entry_bytes"
      "\n" +
      std::string(300, 'x');
  auto failed_id = fail_next_row(error);
  ASSERT_FALSE(failed_id.empty());
  place("pear", 1);
  relay_all();
  {
    broker::reliable_queue queue{conn_};
    broker::inbox inbox{conn_, names_};
    for (std::size_t p = 0; p < names_.partitions; ++p) {
      auto list = names_.partition(p);
      if (auto entry =
              queue.pop(list, names_.processing_for(list, "test-consumer"), 0))
        inbox.apply(*entry);
    }
  }
  place("plum", 3);
  {
    auto db = storage::sqlite::open_and_migrate({db_path(), 1000, "NORMAL"});
    test::outbox_tables store{*db};
    auto claimed =
        store.claim_batch("test-relay-2", storage::wall_clock_now(), {});
    ASSERT_EQ(claimed.events.size(), 1u);
  }

  auto r = outbox_r({"status"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto tables = tables_of(r.out);
  for (auto& table : tables)
    expect_aligned(table);
  std::vector<std::string> titles;
  for (auto& table : tables)
    titles.push_back(cells_of(table.front())[0].text);
  EXPECT_EQ(titles,
            (std::vector<std::string>{
                "STATUS", "ORDERS", "LEASE OWNER (RELAY)", "FAILED EVENT",
                "QUEUE", "PROCESSING LIST", "REDIS", "REDIS SETTING"}))
      << r.out;

  auto statuses = table_titled(r.out, "STATUS");
  for (const auto* status : {"PUBLISHED", "SENDING", "FAILED"})
    EXPECT_EQ(row_of(statuses, status).at(1), "1") << r.out;

  auto lease = row_of(table_titled(r.out, "LEASE OWNER"), "test-relay-2");
  ASSERT_EQ(lease.size(), 6u) << r.out;
  EXPECT_EQ(lease[1], "1");
  EXPECT_EQ(lease[3].rfind("in ", 0), 0u) << lease[3];
  EXPECT_EQ(lease[5].rfind("the relay's ack, or their leases to expire", 0), 0u)
      << lease[5];

  auto failed = row_of(table_titled(r.out, "FAILED EVENT"), failed_id);
  ASSERT_EQ(failed.size(), 6u) << r.out;
  EXPECT_EQ(failed[3], "OrderPlaced");
  EXPECT_EQ(failed[4], "1") << "attempts";
  const auto& shown_error = failed[5];
  // Cut in the middle: its start, and its end, where a cause is said.
  EXPECT_EQ(shown_error.rfind("broker refused: entry of", 0), 0u)
      << shown_error;
  EXPECT_NE(shown_error.find("..."), std::string::npos) << shown_error;
  EXPECT_EQ(shown_error.back(), 'x') << "the error's end: " << shown_error;
  EXPECT_LE(shown_error.size(), 100u) << "long errors are cut";

  auto processing = table_titled(r.out, "PROCESSING LIST");
  ASSERT_EQ(processing.size(), 2u) << r.out;
  EXPECT_EQ(cells_of(processing[1])[1].text, "1");
  auto redis = table_titled(r.out, "REDIS");
  EXPECT_EQ(row_of(redis, "processed").at(1), "1") << r.out;
}

TEST_F(CliAudit, StatusWatchRefreshesUntilInterrupted) {
  place("apple", 2);
  child_process watch{
      outbox_argv({"status", "--watch", "--interval", "0.05", "--json",
                   "--log-level", "debug", "--db", db_path(), "--redis",
                   redis_.endpoint().to_string()}),
      dir_.path().string()};
  ASSERT_TRUE(watch.wait_for_stderr("refresh 3", 10'000));
  watch.signal(SIGINT);
  auto r = watch.wait(10'000);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::istringstream lines{r.out};
  int refreshes = 0;
  for (std::string line; std::getline(lines, line); ++refreshes)
    EXPECT_EQ(nlohmann::json::parse(line).at("outbox").at("orders"), 1);
  EXPECT_GE(refreshes, 3);
}

TEST_F(CliAudit, StatusWatchRefusesAnIntervalOutOfRange) {
  auto r = outbox_r({"status", "--watch", "--interval", "0"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, testing::HasSubstr("--interval"));
}

TEST_F(CliAudit, RedisDownIsARuntimeFailure) {
  place("apple", 2);
  redis_.stop();
  auto verify = outbox_r({"verify"});
  EXPECT_EQ(verify.exit_code, 1);
  EXPECT_THAT(verify.err, testing::HasSubstr("Redis"));
  auto status = outbox_r({"status"});
  EXPECT_EQ(status.exit_code, 1);
  // The database half is still shown, in full.
  auto totals = table_titled(status.out, "ORDERS");
  ASSERT_EQ(totals.size(), 2u) << status.out;
  EXPECT_EQ(cells_of(totals[1])[0].text, "1") << status.out;
  EXPECT_EQ(row_of(table_titled(status.out, "STATUS"), "PENDING").at(1), "1")
      << status.out;
  auto redis = table_titled(status.out, "REDIS");
  ASSERT_EQ(redis.size(), 1u) << status.out;
  EXPECT_THAT(redis[0], testing::HasSubstr("unavailable")) << status.out;
}

} // namespace
} // namespace outbox::test
