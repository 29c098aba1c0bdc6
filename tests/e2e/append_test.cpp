#include "support/outbox_world.hpp"

#include "broker/connection.hpp"
#include "metrics/run_report_json.hpp"
#include "support/redis_lists.hpp"
#include "text/event_headers.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

// `outbox append`: a user's own events, any aggregate and type, on both
// backends: seqs allocated per aggregate, idempotent on --event-id, bad
// input refused before anything is written, and the events delivered by a
// run like the demo's. The real binary, a SQLite file or a private
// PostgreSQL cluster, a private redis-server.

namespace outbox::test {
namespace {

class E2EAppend : public ::testing::TestWithParam<backend> {
protected:
  process_result outbox(std::vector<std::string> args) const {
    auto command = args.front();
    args.erase(args.begin());
    return world_.outbox(command, args);
  }

  process_result append(const std::string& aggregate, const std::string& type,
                        const std::string& payload,
                        std::vector<std::string> more = {}) const {
    std::vector<std::string> args{"append", "--aggregate", aggregate, "--type",
                                  type,     "--payload",   payload,   "--json"};
    args.insert(args.end(), more.begin(), more.end());
    return outbox(args);
  }

  /// Outbox rows, from status.
  std::int64_t rows() const {
    auto s = outbox({"status", "--json"});
    auto out = nlohmann::json::parse(s.out, nullptr, false);
    if (out.is_discarded())
      return -1;
    std::int64_t total = 0;
    for (const auto& [status, count] : out.at("outbox").at("by_status").items())
      total += count.get<std::int64_t>();
    return total;
  }

  outbox_world world_{GetParam(), "append"};
};

TEST_P(E2EAppend, AnyEventInItsAggregatesOrderOnceAndDelivered) {
  auto issued = append("invoice-7", "InvoiceIssued", R"({"amount":120})");
  ASSERT_EQ(issued.exit_code, 0) << issued.err;
  auto first = nlohmann::json::parse(issued.out);
  EXPECT_EQ(first.at("aggregate_id"), "invoice-7");
  EXPECT_EQ(first.at("seq"), 1);
  EXPECT_EQ(first.at("event_type"), "InvoiceIssued");
  EXPECT_FALSE(first.at("replayed").get<bool>());

  auto id = std::string{"0190f3a4-1111-7abc-8def-000000000001"};
  auto paid = append("invoice-7", "InvoicePaid", R"({"amount":120})",
                     {"--event-id", id});
  ASSERT_EQ(paid.exit_code, 0) << paid.err;
  EXPECT_EQ(nlohmann::json::parse(paid.out).at("seq"), 2);
  EXPECT_EQ(nlohmann::json::parse(paid.out).at("event_id"), id);

  // A retry after an unknown outcome: the same event, nothing new.
  auto again = append("invoice-7", "InvoicePaid", R"({"amount":120})",
                      {"--event-id", id});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  auto replayed = nlohmann::json::parse(again.out);
  EXPECT_TRUE(replayed.at("replayed").get<bool>());
  EXPECT_EQ(replayed.at("seq"), 2);
  // The same id for another event is refused, naming what it is.
  auto other = append("invoice-8", "InvoicePaid", R"({})", {"--event-id", id});
  EXPECT_EQ(other.exit_code, 2) << other.out;
  EXPECT_THAT(other.err, testing::HasSubstr("already names InvoicePaid of "
                                            "invoice-7"));
  EXPECT_EQ(rows(), 2);

  auto run = outbox({"run", "--until-drained", "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  // A real report, audit and event types included, reads back to the
  // bytes the binary printed.
  auto report = metrics::run_report_from_json(run.out);
  ASSERT_TRUE(report) << run.out;
  ASSERT_TRUE(report->audit) << run.out;
  EXPECT_EQ(report->audit->by_type.count("InvoicePaid"), 1u) << run.out;
  EXPECT_EQ(metrics::to_json(*report) + "\n", run.out);
  auto verify = outbox({"verify"});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
}

TEST_P(E2EAppend, BadInputIsNamedAndWritesNothing) {
  world_.write_config({{"broker", {{"max_entry_bytes", 4096}}}});
  ASSERT_EQ(outbox({"init"}).exit_code, 0);
  struct bad {
    std::vector<std::string> args;
    std::string named;
  };
  std::vector<bad> cases{
      {{"--aggregate", "a-1", "--type", "T", "--payload", "[1]"},
       "payload must be a JSON object (got a JSON array)"},
      {{"--aggregate", "a-1", "--type", "T", "--payload", "{"},
       "not valid JSON"},
      {{"--aggregate", "a\x01", "--type", "T", "--payload", "{}"},
       "aggregate_id must be UTF-8 text without control characters"},
      {{"--aggregate", "a-1", "--type", "", "--payload", "{}"},
       "event_type must not be empty"},
      {{"--aggregate", "a-1", "--type", "T", "--payload", "{}", "--event-id",
        "42"},
       "event_id must be a UUID"},
      {{"--aggregate", "a-1", "--type", "OrderPlaced", "--payload",
        R"({"sku":"apple"})"},
       "an OrderPlaced the consumers would refuse: payload.qty"},
      {{"--aggregate", "a-1", "--type", "T"}, "needs --payload"},
      {{"--aggregate", "a-1", "--type", "T", "--payload",
        "{\"blob\":\"" + std::string(8000, 'x') + "\"}"},
       "over broker.max_entry_bytes (4096): the relays would refuse"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args{"append"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    auto r = outbox(args);
    EXPECT_EQ(r.exit_code, 2) << c.named << "\n" << r.err;
    EXPECT_THAT(r.err, testing::HasSubstr(c.named));
  }
  EXPECT_EQ(rows(), 0);
}

// Headers given on the command line reach the queue entry as the relay
// publishes it, a traceparent added to an event given none; bad --header
// flags are refused naming the flag.
TEST_P(E2EAppend, HeadersTravelFromTheCommandLineToTheQueueEntry) {
  world_.write_config({{"broker", {{"partitions", 1}}}});
  const std::string traceparent =
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  auto given = append("invoice-1", "InvoiceIssued", "{}",
                      {"--header", "traceparent=" + traceparent, "--header",
                       "tenant=acme", "--header", "note=a=b"});
  ASSERT_EQ(given.exit_code, 0) << given.err;
  auto bare = append("invoice-2", "InvoiceIssued", "{}");
  ASSERT_EQ(bare.exit_code, 0) << bare.err;
  auto placed = outbox({"place-order", "--sku", "apple", "--qty", "1",
                        "--header", "tenant=beta", "--json"});
  ASSERT_EQ(placed.exit_code, 0) << placed.err;

  for (const auto& [flag, named] :
       std::vector<std::pair<std::string, std::string>>{
           {"tenant", "--header must be NAME=VALUE with a name"},
           {"=x", "--header must be NAME=VALUE with a name"},
           {"traceparent=00-1-2-01", "header traceparent must be a W3C"},
       }) {
    auto r = append("invoice-3", "T", "{}", {"--header", flag});
    EXPECT_EQ(r.exit_code, 2) << flag << "\n" << r.err;
    EXPECT_THAT(r.err, testing::HasSubstr(named));
  }
  auto twice =
      append("invoice-3", "T", "{}", {"--header", "a=1", "--header", "a=2"});
  EXPECT_EQ(twice.exit_code, 2);
  EXPECT_THAT(twice.err, testing::HasSubstr("--header a is given twice"));
  EXPECT_EQ(rows(), 3);

  auto relay = outbox({"relay", "--until-drained"});
  ASSERT_EQ(relay.exit_code, 0) << relay.out << relay.err;
  broker::connection conn{world_.redis().connection_options()};
  std::map<std::string, nlohmann::json> headers;
  for (const auto& text : list_items(conn, "pipeline:outbox.events")) {
    auto entry = nlohmann::json::parse(text);
    headers[entry.at("aggregate_id").get<std::string>()] =
        entry.value("headers", nlohmann::json{});
  }
  ASSERT_EQ(headers.size(), 3u);
  EXPECT_EQ(headers["invoice-1"], (nlohmann::json{{"traceparent", traceparent},
                                                  {"tenant", "acme"},
                                                  {"note", "a=b"}}));
  EXPECT_TRUE(text::is_traceparent(
      headers["invoice-2"].value("traceparent", std::string{})))
      << headers["invoice-2"];
  auto order = nlohmann::json::parse(placed.out).at("aggregate_id");
  EXPECT_EQ(headers[order.get<std::string>()].value("tenant", ""), "beta");
  EXPECT_TRUE(text::is_traceparent(
      headers[order.get<std::string>()].value("traceparent", std::string{})));
}

// consumer.unknown_types = dead-letter: an event of a type no consumer has
// an effect for is set aside, its aggregate going on; verify names it
// while it waits; replayed under the record policy it is applied once.
TEST_P(E2EAppend, AnUnknownTypeIsDeadLetteredUntilReplayed) {
  world_.write_config({{"consumer", {{"unknown_types", "dead-letter"}}}});
  auto issued = append("invoice-1", "InvoiceIssued", R"({"amount":120})");
  ASSERT_EQ(issued.exit_code, 0) << issued.err;
  auto id = nlohmann::json::parse(issued.out).at("event_id").get<std::string>();
  ASSERT_EQ(append("invoice-1", "OrderPaid", "{}").exit_code, 0);

  // The run drains, and its audit names the event set aside (exit 1).
  auto run = outbox({"run", "--until-drained", "--json"});
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  EXPECT_THAT(run.out, testing::HasSubstr(id));
  auto listed = outbox({"dead-letters", "--json"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  auto letters = nlohmann::json::parse(listed.out).at("dead_letters");
  ASSERT_EQ(letters.size(), 1u) << listed.out;
  EXPECT_EQ(letters[0].at("event_id"), id);
  EXPECT_EQ(letters[0].at("reason"),
            "unknown event type InvoiceIssued"
            " (consumer.unknown_types is dead-letter)");
  auto waiting = outbox({"verify"});
  EXPECT_NE(waiting.exit_code, 0) << waiting.out;
  EXPECT_THAT(waiting.out + waiting.err, testing::HasSubstr(id));

  world_.write_config({{"consumer", {{"unknown_types", "record"}}}});
  auto replay = outbox({"dead-letters", "replay", "--all", "--json"});
  ASSERT_EQ(replay.exit_code, 0) << replay.out << replay.err;
  auto again = outbox({"run", "--until-drained", "--json"});
  ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
  auto verify = outbox({"verify"});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
  EXPECT_EQ(
      nlohmann::json::parse(outbox({"dead-letters", "--json"}).out).at("count"),
      0);
}

// consumer.effects_lua through `outbox run`: the user's effect applied
// once per event under the effects' prefix; a file Lua refuses stops the
// start with exit 2, naming the file and the line, consuming nothing.
TEST_P(E2EAppend, YourEffectsRunOnceInRedisAndABrokenFileStopsTheStart) {
  auto effects = world_.dir().file("invoices.lua");
  std::ofstream{effects} << "local effects = {}\n"
                            "function effects.InvoiceIssued(event, store)\n"
                            "  store.call('HINCRBY', store.key('invoiced'),\n"
                            "             event.aggregate_id,\n"
                            "             event.payload.amount)\n"
                            "end\n"
                            "return effects\n";
  world_.write_config({{"consumer", {{"effects_lua", effects}}}});
  ASSERT_EQ(append("invoice-1", "InvoiceIssued", R"({"amount":120})").exit_code,
            0);
  ASSERT_EQ(append("invoice-1", "InvoiceIssued", R"({"amount":30})").exit_code,
            0);
  ASSERT_EQ(append("invoice-2", "InvoiceIssued", R"({"amount":7})").exit_code,
            0);
  auto run = outbox({"run", "--until-drained", "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  broker::connection conn{world_.redis().connection_options()};
  auto invoiced = [&](const std::string& aggregate) {
    return broker::reply_text(
        *conn.command({"HGET", "pipeline:effects:invoiced", aggregate}));
  };
  EXPECT_EQ(invoiced("invoice-1"), "150");
  EXPECT_EQ(invoiced("invoice-2"), "7");
  EXPECT_EQ(outbox({"verify"}).exit_code, 0);

  std::ofstream{effects} << "local effects = {}\nfunction effects.X(\n";
  ASSERT_EQ(append("invoice-3", "InvoiceIssued", R"({"amount":1})").exit_code,
            0);
  auto broken = outbox({"run", "--until-drained", "--json"});
  EXPECT_EQ(broken.exit_code, 2) << broken.out << broken.err;
  EXPECT_THAT(broken.err,
              testing::HasSubstr("consumer.effects_lua: " + effects + ":3:"));
  EXPECT_EQ(invoiced("invoice-3"), "") << "nothing consumed";
}

// Upgrading a keyspace of the demo's: the reservation hash of a version
// before `effects:` is merged into the new one by a consumer as it starts,
// and a file of the user's that gives OrderPlaced no effect is said.
TEST_P(E2EAppend, AnOlderReservationIsMergedAndAFileWithoutItIsSaid) {
  auto order = outbox({"place-order", "--sku", "apple", "--qty", "2"});
  ASSERT_EQ(order.exit_code, 0) << order.err;
  ASSERT_EQ(outbox({"run", "--until-drained"}).exit_code, 0);
  // As an older version left it.
  broker::connection conn{world_.redis().connection_options()};
  conn.command({"RENAME", "pipeline:effects:inventory.reserved",
                "pipeline:inventory.reserved"});
  auto named = outbox({"verify"});
  EXPECT_EQ(named.exit_code, 1) << named.out << named.err;
  EXPECT_THAT(named.out + named.err,
              testing::HasSubstr("pipeline:inventory.reserved is the "
                                 "reservation of an older outbox"));
  auto run = outbox({"run", "--until-drained", "--log-level", "info"});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_THAT(run.err, testing::HasSubstr(
                           "merged 1 skus of pipeline:inventory.reserved"));
  EXPECT_EQ(broker::reply_text(*conn.command(
                {"HGET", "pipeline:effects:inventory.reserved", "apple"})),
            "2");
  EXPECT_EQ(outbox({"verify"}).exit_code, 0);

  auto effects = world_.dir().file("invoices.lua");
  std::ofstream{effects} << "return {}\n";
  world_.write_config({{"consumer", {{"effects_lua", effects}}}});
  auto replaced = outbox({"run", "--until-drained"});
  ASSERT_EQ(replaced.exit_code, 0) << replaced.out << replaced.err;
  EXPECT_THAT(replaced.err,
              testing::HasSubstr("consumer.effects_lua " + effects +
                                 " gives OrderPlaced no effect"));
  world_.write_config({{"consumer", {{"effects_lua", ""}}}});
  auto none = outbox({"run", "--until-drained"});
  ASSERT_EQ(none.exit_code, 0) << none.out << none.err;
  EXPECT_THAT(none.err, testing::HasSubstr("consumer.effects_lua \"\" (no "
                                           "effects) gives OrderPlaced no "
                                           "effect"));
}

INSTANTIATE_TEST_SUITE_P(Backends, E2EAppend,
                         ::testing::Values(backend::sqlite, backend::postgres),
                         backend_name);

} // namespace
} // namespace outbox::test
