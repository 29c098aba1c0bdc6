// Effects in the consumer's own database (consumer.sink, docs/events.md
// "Effects in your database"), through the real binary: a demo run with
// consumers crashing after their COMMIT and before the removal applies every
// effect exactly once, in each order's seq order, and verify passes; an effect
// the sink refuses is dead-lettered naming its line; a sink that cannot be
// used stops the start. A SQLite sink beside a SQLite outbox, a PostgreSQL
// sink in the outbox's own cluster.

#include "support/outbox_world.hpp"
#include "support/shop_sink.hpp"
#include "support/sql_probe.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <string>
#include <vector>

namespace outbox::test {
namespace {

using testing::HasSubstr;

class E2ESink : public ::testing::TestWithParam<backend> {
protected:
  E2ESink() {
    sink_ = GetParam() == backend::postgres ? world_.db()
                                            : world_.dir().file("shop.db");
    effects_ = world_.dir().file("effects.sql");
  }

  process_result outbox(std::vector<std::string> args) const {
    auto command = args.front();
    args.erase(args.begin());
    return world_.outbox(command, args);
  }

  /// The sink initialised and the shop's own tables made in it.
  std::unique_ptr<sql_probe> prepared_sink() {
    auto init = outbox({"init", "--sink", sink_});
    EXPECT_EQ(init.exit_code, 0) << init.out << init.err;
    EXPECT_THAT(init.out, HasSubstr("has its inbox table"));
    storage::db_options where;
    where.path = sink_;
    auto probe = sql_probe::open(GetParam(), where);
    for (const auto& table : shop_tables(GetParam()))
      probe->exec(table);
    return probe;
  }

  void write_effects(const std::string& text) const {
    std::ofstream{effects_} << text;
  }

  void use_sink(nlohmann::json more = nlohmann::json::object()) const {
    nlohmann::json consumer{{"sink", sink_}, {"effects_sql", effects_}};
    consumer.update(more);
    world_.write_config({{"consumer", consumer}});
  }

  outbox_world world_{GetParam(), "sink"};
  std::string sink_;
  std::string effects_;
};

TEST_P(E2ESink, CrashedConsumersApplyEveryEffectOnceInOrder) {
  auto probe = prepared_sink();
  write_effects(shop_effects);
  use_sink();
  auto run = outbox(
      {"run", "--until-drained", "--json", "--orders", "300", "--consumers",
       "2", "--seed", "11", "--crash-consumer-after-effect", "0.03",
       "--crash-consumer-after-pop", "0.01",
       // Rolled per batch that reaches the sink, a dozen or so here: high
       // enough to strike in every run.
       "--crash-consumer-after-sink-commit", "0.5", "--log-level", "info"});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  auto report = nlohmann::json::parse(run.out);
  EXPECT_TRUE(report.at("ok").get<bool>()) << report.dump(2);
  EXPECT_GT(report.at("consumer_restarts").get<int>(), 0);
  EXPECT_GT(report.at("duplicates_absorbed").get<int>(), 0);
  EXPECT_THAT(run.err, HasSubstr("injected crash (after its database's "
                                 "commit, before Redis recorded it)"))
      << "the sink's inbox rows absorbed what a crashed batch committed";
  EXPECT_EQ(report.at("order_violations"), 0);

  // Exactly once: one log row per event, as many as inbox rows, and the
  // reservations of every order placed.
  auto events = report.at("outbox_rows").get<std::int64_t>();
  EXPECT_EQ(probe->scalar("SELECT COUNT(*) FROM order_log"), events);
  EXPECT_EQ(probe->scalar("SELECT COUNT(*) FROM (SELECT DISTINCT order_id,"
                          " seq FROM order_log) d"),
            events);
  EXPECT_EQ(probe->scalar("SELECT COUNT(*) FROM outbox_inbox"), events);
  EXPECT_EQ(probe->scalar("SELECT COUNT(*) FROM order_log WHERE kind ="
                          " 'OrderPlaced'"),
            300);
  EXPECT_EQ(probe->scalar("SELECT COUNT(*) FROM order_log WHERE kind ="
                          " 'OrderPlaced' AND trace LIKE '00-%'"),
            300);
  // In order: within an order, a later row never has a lower seq.
  EXPECT_EQ(probe->scalar("SELECT COUNT(*) FROM order_log a JOIN order_log b"
                          " ON a.order_id = b.order_id AND a.id < b.id"
                          " AND a.seq > b.seq"),
            0);
  // Every unit placed is reserved once (the outbox's own payloads).
  auto placed = storage::db_options{};
  placed.path = world_.db();
  auto outbox_db = sql_probe::open(GetParam(), placed);
  auto qty = GetParam() == backend::postgres
                 ? "SUM((payload->>'qty')::bigint)"
                 : "SUM(json_extract(payload, '$.qty'))";
  EXPECT_EQ(probe->scalar("SELECT SUM(qty) FROM reservations"),
            outbox_db->scalar(std::string{"SELECT "} + qty +
                              " FROM outbox WHERE event_type = "
                              "'OrderPlaced'"));

  auto verify = outbox({"verify", "--json"});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
}

TEST_P(E2ESink, ARefusedEffectIsDeadLetteredNamingItsLine) {
  auto probe = prepared_sink();
  probe->exec("CREATE TABLE invoices (id TEXT PRIMARY KEY, amount BIGINT NOT"
              " NULL CHECK (amount > 0))");
  write_effects("-- effect: InvoiceIssued\n"
                "INSERT INTO invoices VALUES (:aggregate_id, :payload.amount)"
                "\n");
  use_sink();
  auto append = [&](const std::string& aggregate, int amount) {
    auto r =
        outbox({"append", "--aggregate", aggregate, "--type", "InvoiceIssued",
                "--payload", "{\"amount\":" + std::to_string(amount) + "}"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
  };
  append("inv-1", 120);
  append("inv-2", -5);
  append("inv-3", 7);
  // Set aside, the run ends failing verify's dead-letter check.
  auto run = outbox({"run", "--until-drained", "--json"});
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  EXPECT_THAT(run.out, HasSubstr("\"name\":\"dead_letters\",\"result\":"
                                 "\"failed\""));
  EXPECT_EQ(probe->scalar("SELECT COUNT(*) FROM invoices"), 2);
  EXPECT_EQ(probe->scalar("SELECT COUNT(*) FROM outbox_inbox"), 2);
  auto dead = outbox({"dead-letters", "--json"});
  ASSERT_EQ(dead.exit_code, 0) << dead.err;
  auto list = nlohmann::json::parse(dead.out).at("dead_letters");
  ASSERT_EQ(list.size(), 1u) << dead.out;
  EXPECT_THAT(list[0].dump(),
              HasSubstr("effect failed: " + effects_ + ":2: InvoiceIssued: "));
  EXPECT_THAT(list[0].dump(), HasSubstr("inv-2"));
  // Given up on, it is accounted for.
  auto id = list[0].at("event_id").get<std::string>();
  auto drop = outbox({"dead-letters", "drop", id, "--reason", "refused"});
  EXPECT_EQ(drop.exit_code, 0) << drop.err;
  auto verify = outbox({"verify"});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
}

TEST_P(E2ESink, ASinkThatCannotBeUsedStopsTheStart) {
  write_effects(shop_effects);
  use_sink();
  world_.outbox("init", {});
  auto uninitialised = outbox({"run", "--until-drained", "--orders", "1"});
  EXPECT_EQ(uninitialised.exit_code, 2) << uninitialised.err;
  EXPECT_THAT(uninitialised.err, HasSubstr("outbox init --sink"));

  auto init = outbox({"init", "--sink", sink_});
  ASSERT_EQ(init.exit_code, 0) << init.err;
  auto no_tables = outbox({"run", "--until-drained", "--orders", "1"});
  EXPECT_EQ(no_tables.exit_code, 2) << no_tables.err;
  // The first type in name order whose statement names a missing table.
  EXPECT_THAT(no_tables.err, HasSubstr("consumer.sink: " + effects_ +
                                       ":8: "
                                       "OrderPaid: "));
  EXPECT_THAT(no_tables.err, HasSubstr("order_log"));
  EXPECT_THAT(no_tables.err, testing::Not(HasSubstr("outbox init")))
      << "the database's own words, not the outbox's hint";

  world_.write_config({{"consumer", {{"sink", sink_}}}});
  auto half = outbox({"run", "--until-drained", "--orders", "1"});
  EXPECT_EQ(half.exit_code, 2);
  EXPECT_THAT(half.err, HasSubstr("consumer.sink needs consumer.effects_sql"));
}

INSTANTIATE_TEST_SUITE_P(Backends, E2ESink,
                         ::testing::Values(backend::sqlite, backend::postgres),
                         backend_name);

} // namespace
} // namespace outbox::test
