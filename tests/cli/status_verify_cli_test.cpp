#include "cli/cli_fixture.hpp"

#include "broker/connection.hpp"
#include "broker/entry.hpp"
#include "broker/inbox.hpp"
#include "broker/keys.hpp"
#include "broker/publisher.hpp"
#include "broker/reliable_queue.hpp"
#include "config/settings.hpp"
#include "storage/database.hpp"
#include "storage/outbox_store.hpp"
#include "support/redis_server.hpp"

#include <csignal>
#include <sstream>
#include <string>
#include <vector>

namespace outbox::test {
namespace {

/// A cell of a line of `outbox status`'s tables: cells are separated by at
/// least two spaces (a cell itself holds single spaces at most).
struct cell {
  std::size_t start = 0;
  std::string text;
  std::size_t end() const { return start + text.size(); }
};

std::vector<cell> cells_of(const std::string& line) {
  std::vector<cell> cells;
  std::size_t at = line.find_first_not_of(' ');
  while (at != std::string::npos) {
    auto gap = line.find("  ", at);
    auto end = gap == std::string::npos ? line.size() : gap;
    cells.push_back({at, line.substr(at, end - at)});
    at = gap == std::string::npos ? gap : line.find_first_not_of(' ', gap);
  }
  return cells;
}

/// The blocks of lines between blank lines: each table of the output.
std::vector<std::vector<std::string>> tables_of(const std::string& text) {
  std::vector<std::vector<std::string>> tables(1);
  std::istringstream lines{text};
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty())
      tables.back().push_back(line);
    else if (!tables.back().empty())
      tables.emplace_back();
  }
  if (tables.back().empty())
    tables.pop_back();
  return tables;
}

/// The table whose header starts with `title` (empty when there is none).
std::vector<std::string> table_titled(const std::string& text,
                                      const std::string& title) {
  for (auto& table : tables_of(text))
    if (table.front().rfind(title, 0) == 0)
      return table;
  return {};
}

/// The cells of the row of `table` whose first cell is `key`.
std::vector<std::string> row_of(const std::vector<std::string>& table,
                                const std::string& key) {
  for (std::size_t i = 1; i < table.size(); ++i) {
    auto cells = cells_of(table[i]);
    if (!cells.empty() && cells[0].text == key) {
      std::vector<std::string> texts;
      for (auto& c : cells)
        texts.push_back(c.text);
      return texts;
    }
  }
  return {};
}

/// Every column starts where its header starts (left-aligned) or ends where
/// its header ends (right-aligned), on every line of the table.
void expect_aligned(const std::vector<std::string>& table) {
  ASSERT_GE(table.size(), 2u) << "a header and at least one row";
  std::string shown;
  for (auto& line : table)
    shown += line + '\n';
  auto header = cells_of(table.front());
  for (auto& line : table)
    ASSERT_EQ(cells_of(line).size(), header.size()) << shown;
  for (std::size_t i = 0; i < header.size(); ++i) {
    bool starts = true;
    bool ends = true;
    for (auto& line : table) {
      auto c = cells_of(line)[i];
      starts = starts && c.start == header[i].start;
      ends = ends && c.end() == header[i].end();
    }
    EXPECT_TRUE(starts || ends) << "column " << header[i].text << ":\n"
                                << shown;
  }
}

/// status, verify and retry against a private Redis. The relay and consumer
/// steps are done here with the library, one batch each, so the binary sees
/// a real pipeline's state.
class CliAudit : public cli_fixture {
protected:
  process_result outbox_r(std::vector<std::string> args) {
    return outbox(std::move(args), {"--redis", redis_.endpoint().to_string()});
  }

  void place(const std::string& sku, int qty) {
    auto r =
        outbox({"place-order", "--sku", sku, "--qty", std::to_string(qty)});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }

  /// Claims the one unpublished row and fails it with `error`, as a relay
  /// would with lease.max_attempts 1: the row ends FAILED. Its event_id, or
  /// empty (and a test failure) when there was not exactly one row.
  std::string fail_next_row(const std::string& error) {
    auto db = storage::open_and_migrate({db_path(), 1000, "NORMAL"});
    storage::outbox_store store{*db};
    storage::lease_policy policy;
    policy.max_attempts = 1;
    auto now = storage::wall_clock_now();
    auto claimed = store.claim_batch("r", now, policy);
    if (claimed.events.size() != 1) {
      ADD_FAILURE() << "expected one row to claim, got "
                    << claimed.events.size();
      return "";
    }
    store.fail("r", claimed.leases(), error, now, policy);
    return claimed.events[0].event_id;
  }

  /// One relay pass: claim everything, publish, ack.
  void relay_all() {
    auto db = storage::open_and_migrate({db_path(), 1000, "NORMAL"});
    storage::outbox_store store{*db};
    auto now = storage::wall_clock_now();
    auto claimed = store.claim_batch("test-relay", now, {});
    std::vector<broker::event_entry> entries;
    for (const auto& e : claimed.events)
      entries.push_back(
          {e.event_id, e.aggregate_id, e.seq, e.event_type, e.payload, now});
    broker::publisher{conn_, names_}.publish(entries);
    auto acked = store.ack("test-relay", claimed.leases(), now);
    ASSERT_TRUE(acked.rejected.empty());
  }

  /// One consumer pass: pop, apply, remove until the queue is empty.
  void consume_all() {
    broker::reliable_queue queue{conn_};
    broker::inbox inbox{conn_, names_};
    for (std::size_t p = 0; p < names_.partitions; ++p) {
      auto list = names_.partition(p);
      auto processing = names_.processing_for(list, "test-consumer");
      while (auto entry = queue.pop(list, processing, 0)) {
        inbox.apply(*entry);
        queue.remove(processing, *entry);
      }
    }
  }

  redis_server redis_;
  // The binary runs with the default settings: same key layout here.
  broker::keys names_ = config::settings{}.broker;
  broker::connection conn_{redis_.connection_options()};
};

TEST_F(CliAudit, ReadCommandsRefuseAMissingDatabase) {
  std::vector<std::vector<std::string>> commands{
      {"status"}, {"verify"}, {"retry", "--all-failed"}};
  for (const auto& command : commands) {
    auto r = outbox_r(command);
    EXPECT_EQ(r.exit_code, 1) << command[0] << ": " << r.err;
    EXPECT_NE(r.err.find("outbox init"), std::string::npos) << r.err;
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
  EXPECT_NE(r.out.find("not-an-outbox-event"), std::string::npos) << r.out;
}

TEST_F(CliAudit, VerifySkipsTheDeliveryCheckWhileQueued) {
  place("apple", 2);
  relay_all();
  auto r = outbox_r({"verify", "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  // Named: a range-for over json_of(r).at(...) would iterate a temporary
  // already destroyed (ASan: heap-use-after-free).
  auto report = json_of(r);
  for (const auto& check : report.at("checks")) {
    if (check.at("name") == "published_processed") {
      EXPECT_EQ(check.at("result"), "skipped");
    }
  }
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
    auto db = storage::open_and_migrate({db_path(), 1000, "NORMAL"});
    storage::outbox_store store{*db};
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
  EXPECT_EQ(titles, (std::vector<std::string>{"STATUS", "ORDERS", "LEASE OWNER",
                                              "FAILED EVENT", "QUEUE",
                                              "PROCESSING LIST", "REDIS"}))
      << r.out;

  auto statuses = table_titled(r.out, "STATUS");
  for (const auto* status : {"PUBLISHED", "SENDING", "FAILED"})
    EXPECT_EQ(row_of(statuses, status).at(1), "1") << r.out;

  auto lease = row_of(table_titled(r.out, "LEASE OWNER"), "test-relay-2");
  ASSERT_EQ(lease.size(), 3u) << r.out;
  EXPECT_EQ(lease[1], "1");
  EXPECT_EQ(lease[2].rfind("in ", 0), 0u) << lease[2];

  auto failed = row_of(table_titled(r.out, "FAILED EVENT"), failed_id);
  ASSERT_EQ(failed.size(), 6u) << r.out;
  EXPECT_EQ(failed[3], "OrderPlaced");
  EXPECT_EQ(failed[4], "1") << "attempts";
  const auto& shown_error = failed[5];
  EXPECT_EQ(shown_error.rfind("broker refused: entry of 2000000 bytes", 0), 0u)
      << shown_error;
  EXPECT_EQ(shown_error.substr(shown_error.size() - 3), "...") << shown_error;
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
  EXPECT_NE(r.err.find("--interval"), std::string::npos) << r.err;
}

TEST_F(CliAudit, RedisDownIsARuntimeFailure) {
  place("apple", 2);
  redis_.stop();
  auto verify = outbox_r({"verify"});
  EXPECT_EQ(verify.exit_code, 1);
  EXPECT_NE(verify.err.find("Redis"), std::string::npos) << verify.err;
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
  EXPECT_NE(redis[0].find("unavailable"), std::string::npos) << status.out;
}

TEST_F(CliAudit, RetryRefusesUnknownIdsAndRetriesFailedRows) {
  place("apple", 2);
  auto unknown = outbox_r({"retry", "no-such-event"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("no-such-event"), std::string::npos);
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
