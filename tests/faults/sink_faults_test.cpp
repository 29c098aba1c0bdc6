// Effects in the consumer's own database (consumer.sink) on PostgreSQL
// under real faults: the consumer process SIGKILLed again and again while
// it applies batches (some between its sink's COMMIT and Redis's record,
// some before the removal), and the sink's server crashed and restarted
// under it. Every effect lands exactly once, each order's events in seq
// order, and verify passes.

#include "support/pg_server.hpp"
#include "support/shop_sink.hpp"
#include "tests/faults/fault_fixture.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <libpq-fe.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <memory>
#include <string>

namespace outbox::test {
namespace {

class FaultSink : public fault_fixture {
protected:
  void SetUp() override {
    fault_fixture::SetUp();
    auto init =
        run_outbox({"init", "--sink", sink_.uri()}, dir_.path().string());
    ASSERT_EQ(init.exit_code, 0) << init.err;
    for (const auto& table : shop_tables(backend::postgres))
      sink_sql(table);
    auto effects = dir_.file("shop.sql");
    std::ofstream{effects} << shop_effects;
    // The fixture's config, with the sink.
    nlohmann::json config;
    std::ifstream{config_path_} >> config;
    config["consumer"] = {{"sink", sink_.uri()}, {"effects_sql", effects}};
    config["crash"] = {{"consumer_after_sink_commit", 0.02}};
    // A batch's transaction in the sink is many round trips: under the
    // sanitizers on a loaded machine it may take a second, which a 500 ms
    // lease would call a stall.
    config["lease"]["ttl_ms"] = 1000;
    std::ofstream{config_path_} << config.dump();
  }

  /// Runs statements in the sink; fails the test when they fail.
  void sink_sql(const std::string& sql) const {
    std::unique_ptr<PGconn, decltype(&PQfinish)> conn{
        PQconnectdb(sink_.uri().c_str()), &PQfinish};
    ASSERT_EQ(PQstatus(conn.get()), CONNECTION_OK);
    std::unique_ptr<PGresult, decltype(&PQclear)> answer{
        PQexec(conn.get(), sql.c_str()), &PQclear};
    ASSERT_EQ(PQresultStatus(answer.get()), PGRES_COMMAND_OK)
        << PQresultErrorMessage(answer.get());
  }

  /// One number from the sink (fault_checks.hpp).
  std::int64_t sink_number(const std::string& sql) const {
    return database_number(sink_.uri(), sql);
  }

  /// The consumer's own database, a private cluster of its own.
  pg_server sink_;
};

TEST_F(FaultSink, KilledConsumersAndARestartedSinkApplyEveryEffectOnce) {
  auto relays = start_run(relay_only_flags());
  auto load = waves(300);
  auto consumer = start_run(consumer_only_flags());
  ASSERT_TRUE(consumer->wait_for_stderr("started 0 relays", 10'000));

  std::int64_t kills = 0;
  bool restarted = false;
  auto end = std::chrono::steady_clock::now() + fault_window();
  while (std::chrono::steady_clock::now() < end) {
    load.pump(random_ms(100, 300));
    if (kills == 2 && !restarted) {
      // The sink crashes under a running consumer and comes back: its
      // batches wait, kept, and go on once it answers.
      sink_.crash();
      load.pump(random_ms(300, 800));
      sink_.start();
      restarted = true;
      // The consumers waited it out on their own, under load.
      EXPECT_TRUE(
          consumer->wait_for_stderr("effects' database reachable", 30'000));
      continue;
    }
    replace_killed_consumer(consumer, load, random_ms(50, 200));
    ++kills;
  }
  auto orders = load.finish(120'000);
  stop_gracefully(*relays, "relay process");
  stop_gracefully(*consumer, "consumer process");
  drain();

  ASSERT_TRUE(restarted) << "the fault window ended before the sink's restart";
  EXPECT_GE(kills, 2);
  auto rows = count("SELECT COUNT(*) FROM outbox");
  EXPECT_GE(rows, orders);
  // Exactly once: one log row per event and one inbox row per event.
  EXPECT_EQ(sink_number("SELECT COUNT(*) FROM order_log"), rows);
  EXPECT_EQ(sink_number("SELECT COUNT(*) FROM (SELECT DISTINCT order_id, seq"
                        " FROM order_log) d"),
            rows);
  EXPECT_EQ(sink_number("SELECT COUNT(*) FROM outbox_inbox"), rows);
  // In order: within an order, a later row never has a lower seq.
  EXPECT_EQ(sink_number("SELECT COUNT(*) FROM order_log a JOIN order_log b"
                        " ON a.order_id = b.order_id AND a.id < b.id"
                        " AND a.seq > b.seq"),
            0);
  EXPECT_EQ(sink_number("SELECT SUM(qty) FROM reservations"),
            count("SELECT SUM(json_extract(payload, '$.qty')) FROM outbox"
                  " WHERE event_type = 'OrderPlaced'"));
  auto verify = run_outbox(
      [&] {
        auto args = common();
        args.insert(args.begin(), "verify");
        return args;
      }(),
      dir_.path().string());
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
}

} // namespace
} // namespace outbox::test
