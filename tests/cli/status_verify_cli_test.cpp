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

namespace outbox::test {
namespace {

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
  EXPECT_NE(text.out.find("PUBLISHED 2"), std::string::npos) << text.out;
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
  EXPECT_NE(status.out.find("orders 1"), std::string::npos) << status.out;
  EXPECT_NE(status.out.find("unavailable"), std::string::npos) << status.out;
}

TEST_F(CliAudit, RetryRefusesUnknownIdsAndRetriesFailedRows) {
  place("apple", 2);
  auto unknown = outbox_r({"retry", "no-such-event"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("no-such-event"), std::string::npos);
  auto neither = outbox_r({"retry"});
  EXPECT_EQ(neither.exit_code, 2);

  // Make the row FAILED the way a relay would: claims that never ack.
  std::string event_id;
  {
    auto db = storage::open_and_migrate({db_path(), 1000, "NORMAL"});
    storage::outbox_store store{*db};
    storage::lease_policy policy;
    policy.max_attempts = 1;
    auto now = storage::wall_clock_now();
    auto claimed = store.claim_batch("r", now, policy);
    ASSERT_EQ(claimed.events.size(), 1u);
    event_id = claimed.events[0].event_id;
    store.fail("r", claimed.leases(), "broker refused", now, policy);
  }
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
