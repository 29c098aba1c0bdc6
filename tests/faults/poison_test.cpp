// Scenario 5 of the fault suite: a poison event, one the broker refuses
// (over broker.max_entry_bytes). It must back off, end FAILED after
// lease.max_attempts claims, block only its own aggregate, show in `outbox
// status`, and go through, in order with its aggregate's later events, once
// the cause is fixed and an operator runs `outbox retry`.

#include "tests/faults/fault_world.hpp"

#include "storage/sqlite/database.hpp"
#include "storage/sqlite/order_store.hpp"
#include "support/fast_config.hpp"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <hiredis/hiredis.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <csignal>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace outbox::test {
namespace {

using json = nlohmann::json;
using steady = std::chrono::steady_clock;

/// One outbox row as read from outside.
struct row_state {
  std::string status;
  int attempts = 0;
  std::int64_t available_at = 0;
  std::string last_error;
};

/// What the test committed: every aggregate, the poison event and the later
/// event of its aggregate that it blocks.
struct scenario_events {
  std::vector<std::string> aggregates;
  std::string poison_aggregate;
  /// The poison aggregate's OrderPlaced, published before the poison.
  std::string head;
  std::string poison;
  std::string blocked;
  int rows = 0;
};

class FaultPoison : public fault_world {
protected:
  /// A config with short leases and timings; `broker` and `lease` are
  /// merged in.
  std::string write_config(const std::string& name, const json& broker,
                           const json& lease) {
    json patch = {{"broker", broker}, {"lease", lease}};
    // The lease (also the consumers' lock) must outlast both stores'
    // timeouts: a third of it each.
    auto third = fast_config(patch)["lease"]["ttl_ms"].get<int>() / 3;
    patch["db"] = {{"busy_timeout_ms", third}};
    patch["redis"] = {{"io_timeout_ms", third}};
    return fault_world::write_config(patch, name);
  }

  std::vector<std::string> args(std::vector<std::string> command,
                                const std::string& config) const {
    return with_common(std::move(command), db_path_, config);
  }

  /// Orders on `aggregate_count` aggregates, each with a small OrderPaid,
  /// except the first: its OrderPaid carries a `poison_bytes` note, and an
  /// OrderShipped follows it. Written through the library, as the writer
  /// would.
  scenario_events commit_orders(int aggregate_count, std::size_t poison_bytes) {
    auto db = storage::sqlite::open_and_migrate({db_path_, 5000, "FULL"});
    storage::sqlite::order_store store{*db};
    scenario_events out;
    auto now = storage::wall_clock_now();
    for (int i = 0; i < aggregate_count; ++i) {
      auto placed = store.place_order(
          {std::nullopt, "sku-" + std::to_string(i % 3), i + 1}, now);
      out.aggregates.push_back(placed.aggregate_id);
      ++out.rows;
      if (i == 0) {
        json note{{"order_id", placed.order_id},
                  {"note", std::string(poison_bytes, 'p')}};
        out.poison_aggregate = placed.aggregate_id;
        out.head = placed.event_id;
        out.poison =
            store
                .append_event({placed.aggregate_id, "OrderPaid", note.dump()},
                              now)
                .event_id;
        out.blocked = store
                          .append_event({placed.aggregate_id, "OrderShipped",
                                         R"({"carrier":"post"})"},
                                        now)
                          .event_id;
        out.rows += 2;
      } else {
        store.append_event(
            {placed.aggregate_id, "OrderPaid", R"({"amount_cents":100})"}, now);
        ++out.rows;
      }
    }
    return out;
  }

  row_state row(const std::string& event_id) const {
    SQLite::Database db{db_path_, SQLite::OPEN_READONLY};
    SQLite::Statement q{db, "SELECT status, attempts, available_at, "
                            "COALESCE(last_error, '') FROM outbox "
                            "WHERE event_id = ?"};
    q.bind(1, event_id);
    row_state r;
    if (q.executeStep()) {
      r.status = q.getColumn(0).getString();
      r.attempts = q.getColumn(1).getInt();
      r.available_at = q.getColumn(2).getInt64();
      r.last_error = q.getColumn(3).getString();
    }
    return r;
  }

  std::int64_t processed_count() const {
    auto conn = redis();
    return conn.command({"HLEN", "pipeline:processed"})->integer;
  }

  /// The dedup record of an event (its result JSON), or null.
  json processed_record(const std::string& event_id) const {
    auto conn = redis();
    auto r = conn.command({"HGET", "pipeline:processed", event_id});
    if (r->type != REDIS_REPLY_STRING)
      return nullptr;
    return json::parse(broker::reply_text(*r));
  }

  /// Waits (bounded) until the consumers applied `count` events: the
  /// pipeline runs in another process, so this is observed from outside.
  bool wait_processed(std::int64_t count, int timeout_ms) const {
    auto deadline = steady::now() + std::chrono::milliseconds(timeout_ms);
    while (steady::now() < deadline) {
      if (processed_count() >= count)
        return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return processed_count() >= count;
  }

  pipeline_location where(const std::string& config) const {
    // The config the run used, not the default one.
    return {db_path_, redis_->endpoint(), config, dir_.path().string()};
  }
};

TEST_F(FaultPoison, BacksOffFailsBlocksOnlyItsAggregateAndRetryFinishesIt) {
  // A 3000-byte note is over the 2048-byte limit; the rest are ~300 bytes.
  // Backoff 500 ms then 1000 ms: the third claim (the last) comes >= 1.5 s
  // after the first, so a hot loop could not go unnoticed.
  auto strict = write_config("strict.json", {{"max_entry_bytes", 2048}},
                             {{"max_attempts", 3},
                              {"backoff_base_ms", 500},
                              {"backoff_max_ms", 1000}});
  auto events = commit_orders(6, 3000);
  ASSERT_EQ(events.rows, 13);
  const int others = events.rows - 2; // everything but poison and blocked

  // 1. An unbounded run, as in production.
  child_process run{
      outbox_argv(
          args({"run", "--relays", "2", "--consumers", "1", "--json"}, strict)),
      dir_.path().string()};
  ASSERT_TRUE(run.wait_for_stderr("broker refused", 15'000));
  auto first_refusal = steady::now();
  auto backing_off = row(events.poison);
  auto read_at = storage::wall_clock_now();
  EXPECT_EQ(backing_off.status, "PENDING");
  EXPECT_EQ(backing_off.attempts, 1);
  EXPECT_GT(backing_off.available_at, read_at) << "no backoff";
  EXPECT_THAT(backing_off.last_error, testing::HasSubstr(events.poison));

  ASSERT_TRUE(run.wait_for_stderr("row FAILED", 15'000));
  auto waited = steady::now() - first_refusal;
  // The backoffs add up to 1.5 s; both lines are noticed by polling, the
  // first one possibly late on a busy machine, so the bound leaves room. A
  // hot loop would take a few ms.
  EXPECT_GE(waited, std::chrono::milliseconds(1000))
      << "claims 2 and 3 came sooner than the backoff allows";

  // Every other aggregate flows while the poison sits FAILED.
  ASSERT_TRUE(wait_processed(others, 15'000)) << processed_count();
  auto failed = row(events.poison);
  EXPECT_EQ(failed.status, "FAILED");
  EXPECT_EQ(failed.attempts, 3);
  EXPECT_THAT(failed.last_error, testing::HasSubstr(events.poison));
  EXPECT_THAT(failed.last_error, testing::HasSubstr("max_entry_bytes (2048)"));
  EXPECT_EQ(row(events.head).status, "PUBLISHED");
  auto blocked = row(events.blocked);
  EXPECT_EQ(blocked.status, "PENDING");
  EXPECT_EQ(blocked.attempts, 0) << "a held-back row paid an attempt";
  EXPECT_TRUE(processed_record(events.poison).is_null());
  EXPECT_TRUE(processed_record(events.blocked).is_null());
  for (std::size_t i = 1; i < events.aggregates.size(); ++i) {
    auto conn = redis();
    auto seq = conn.command(
        {"HGET", "pipeline:outbox.aggregate_seq", events.aggregates[i]});
    EXPECT_EQ(broker::reply_text(*seq), "2") << events.aggregates[i];
  }

  // `outbox status` shows it, in text and JSON, with the reason.
  auto text = run_outbox(args({"status"}, strict), dir_.path().string());
  EXPECT_EQ(text.exit_code, 0) << text.err;
  // A row of the FAILED table, which starts with the event_id.
  EXPECT_NE(text.out.find("\n" + events.poison + "  "), std::string::npos)
      << text.out;
  EXPECT_THAT(text.out, testing::HasSubstr("max_entry_bytes"));
  auto status =
      run_outbox(args({"status", "--json"}, strict), dir_.path().string());
  ASSERT_EQ(status.exit_code, 0) << status.err;
  auto outbox = json::parse(status.out).at("outbox");
  EXPECT_EQ(outbox.at("by_status").at("FAILED"), 1);
  EXPECT_EQ(outbox.at("by_status").at("PENDING"), 1);
  EXPECT_EQ(outbox.at("by_status").at("PUBLISHED"), others);
  ASSERT_EQ(outbox.at("failed").size(), 1u);
  auto listed = outbox.at("failed").at(0);
  EXPECT_EQ(listed.at("event_id"), events.poison);
  EXPECT_EQ(listed.at("aggregate_id"), events.poison_aggregate);
  EXPECT_EQ(listed.at("seq"), 2);
  EXPECT_EQ(listed.at("attempts"), 3);
  EXPECT_EQ(listed.at("last_error"), failed.last_error);

  run.signal(SIGTERM);
  auto stopped = run.wait(20'000);
  EXPECT_EQ(stopped.exit_code, 0) << stopped.out << stopped.err;
  auto report = json::parse(stopped.out);
  EXPECT_EQ(report.at("failed_rows"), 1);
  EXPECT_EQ(report.at("pending_rows"), 1);
  EXPECT_EQ(report.at("relay_restarts"), 0);
  // No hot loop: a FAILED row is never claimed again.
  EXPECT_EQ(row(events.poison).attempts, 3);

  // 2. A bounded run cannot drain behind the FAILED row: it must say so
  // and end, not hang.
  auto started = steady::now();
  auto bounded = run_outbox(args({"run", "--relays", "1", "--consumers", "1",
                                  "--until-drained", "--json"},
                                 strict),
                            dir_.path().string(), 30'000);
  EXPECT_LT(steady::now() - started, std::chrono::seconds(15));
  EXPECT_EQ(bounded.exit_code, 1) << bounded.out << bounded.err;
  ASSERT_FALSE(bounded.out.empty()) << bounded.err;
  auto stalled = json::parse(bounded.out);
  EXPECT_FALSE(stalled.at("ok").get<bool>());
  EXPECT_NE(stalled.at("violations").dump().find("FAILED"), std::string::npos)
      << stalled.dump(2);
  EXPECT_EQ(row(events.poison).attempts, 3);
  EXPECT_EQ(row(events.blocked).status, "PENDING");

  // 3. Retry refuses a row that is not FAILED and leaves it alone...
  auto wrong =
      run_outbox(args({"retry", events.blocked}, strict), dir_.path().string());
  EXPECT_EQ(wrong.exit_code, 2) << wrong.out << wrong.err;
  EXPECT_THAT(wrong.err, testing::HasSubstr(events.blocked));

  // ...and, once the limit is raised (the cause fixed), lets the poison and
  // the row behind it through, in seq order.
  auto fixed = write_config("fixed.json", {{"max_entry_bytes", 1 << 20}},
                            {{"max_attempts", 3},
                             {"backoff_base_ms", 500},
                             {"backoff_max_ms", 1000}});
  auto retried =
      run_outbox(args({"retry", events.poison}, fixed), dir_.path().string());
  ASSERT_EQ(retried.exit_code, 0) << retried.err;
  EXPECT_EQ(json::parse(retried.out).at("retried"), 1);
  auto again = row(events.poison);
  EXPECT_EQ(again.status, "PENDING");
  EXPECT_EQ(again.attempts, 0);

  auto drained = run_outbox(args({"run", "--relays", "2", "--consumers", "1",
                                  "--until-drained", "--json"},
                                 fixed),
                            dir_.path().string(), 30'000);
  ASSERT_EQ(drained.exit_code, 0) << drained.out << drained.err;
  EXPECT_TRUE(json::parse(drained.out).at("ok").get<bool>());
  auto poison_done = processed_record(events.poison);
  auto blocked_done = processed_record(events.blocked);
  ASSERT_FALSE(poison_done.is_null());
  ASSERT_FALSE(blocked_done.is_null());
  EXPECT_EQ(poison_done.at("seq"), 2);
  EXPECT_EQ(blocked_done.at("seq"), 3);
  EXPECT_LE(poison_done.at("at").get<std::int64_t>(),
            blocked_done.at("at").get<std::int64_t>());
  auto conn = redis();
  EXPECT_EQ(
      broker::reply_text(*conn.command(
          {"HGET", "pipeline:outbox.aggregate_seq", events.poison_aggregate})),
      "3");
  auto figures = expect_pipeline_intact(where(fixed));
  EXPECT_EQ(figures.outbox_rows, events.rows);
  EXPECT_EQ(figures.order_violations, 0);
  EXPECT_EQ(figures.dead_lettered, 0);
}

TEST_F(FaultPoison, HugePayloadOverTheDefaultLimitWaitsForRetryAllFailed) {
  // 1.5 MiB of payload, over the default 1 MiB; no max_entry_bytes in the
  // config, so the default applies. A longer lease: encoding megabytes
  // under the sanitizers on a busy machine has taken over a second, and an
  // expired lease is not what this tests.
  auto defaults = write_config("defaults.json", json::object(),
                               {{"ttl_ms", 4000},
                                {"max_attempts", 2},
                                {"backoff_base_ms", 50},
                                {"backoff_max_ms", 100}});
  auto events = commit_orders(4, 3 << 19);
  const int others = events.rows - 2;

  auto stalled = run_outbox(args({"run", "--relays", "2", "--consumers", "1",
                                  "--until-drained", "--json"},
                                 defaults),
                            dir_.path().string(), 30'000);
  EXPECT_EQ(stalled.exit_code, 1) << stalled.out << stalled.err;
  ASSERT_FALSE(stalled.out.empty()) << stalled.err;
  auto report = json::parse(stalled.out);
  EXPECT_EQ(report.at("failed_rows"), 1) << report.dump(2);
  // The row before the poison went out and was acknowledged; it is not
  // left to expire and fail with it.
  EXPECT_EQ(row(events.head).status, "PUBLISHED");
  EXPECT_EQ(report.at("pending_rows"), 1);
  EXPECT_EQ(report.at("processed_unique"), others);
  auto failed = row(events.poison);
  EXPECT_EQ(failed.status, "FAILED");
  EXPECT_EQ(failed.attempts, 2);
  EXPECT_THAT(failed.last_error,
              testing::HasSubstr("max_entry_bytes (1048576)"));

  auto raised = write_config("raised.json", {{"max_entry_bytes", 4 << 20}},
                             {{"ttl_ms", 4000},
                              {"max_attempts", 2},
                              {"backoff_base_ms", 50},
                              {"backoff_max_ms", 100}});
  auto retried =
      run_outbox(args({"retry", "--all-failed"}, raised), dir_.path().string());
  ASSERT_EQ(retried.exit_code, 0) << retried.err;
  EXPECT_EQ(json::parse(retried.out).at("retried"), 1);
  auto drained = run_outbox(args({"run", "--relays", "2", "--consumers", "1",
                                  "--until-drained", "--json"},
                                 raised),
                            dir_.path().string(), 30'000);
  ASSERT_EQ(drained.exit_code, 0) << drained.out << drained.err;
  EXPECT_EQ(processed_record(events.blocked).at("seq"), 3);
  auto figures = expect_pipeline_intact(where(raised));
  EXPECT_EQ(figures.outbox_rows, events.rows);
}

} // namespace
} // namespace outbox::test
