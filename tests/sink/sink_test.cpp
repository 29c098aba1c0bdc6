// The consumer's own database (sink/sink.hpp) on a real SQLite file and a
// real private PostgreSQL cluster: effects run once with their inbox rows,
// a refused statement takes back only its own event, a sink that cannot
// be used is named at open, and one that goes away comes back.

#include "sink/sink.hpp"
#include "support/sql_probe.hpp"
#include "support/storage_backend.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

namespace outbox::test {
namespace {

using sink::sink_event;
using sink::sink_verdict;
using testing::HasSubstr;
using outcome = sink_verdict::outcome;

const char* const effects_text =
    "-- effect: InvoiceIssued\n"
    "INSERT INTO invoices (id, amount, tenant, detail)\n"
    "  VALUES (:aggregate_id, :payload.amount, :headers.tenant,"
    " :payload.detail);\n"
    "-- effect: InvoicePaid\n"
    "UPDATE invoices SET paid = paid + :payload.amount WHERE id = "
    ":aggregate_id;\n"
    "INSERT INTO payments (invoice_id, seq, amount)\n"
    "  VALUES (:aggregate_id, :seq, :payload.amount)\n";

class SinkStore : public ::testing::TestWithParam<backend> {
protected:
  SinkStore() : db_(GetParam()) {
    target_.location = db_.options().path;
    sink::create_sink_schema(target_);
    probe_ = sql_probe::open(GetParam(), db_.options());
    probe_->exec("CREATE TABLE invoices (id TEXT PRIMARY KEY, amount BIGINT"
                 " NOT NULL, tenant TEXT, detail TEXT, paid BIGINT NOT NULL"
                 " DEFAULT 0)");
    probe_->exec("CREATE TABLE payments (invoice_id TEXT NOT NULL, seq BIGINT"
                 " NOT NULL, amount BIGINT NOT NULL CHECK (amount > 0))");
  }

  std::unique_ptr<sink::sink> open(const std::string& text = effects_text) {
    return sink::open_sink(
        target_, "billing:", sink::parse_sql_effects(text, "effects.sql"));
  }

  static sink_event event(const std::string& id, const std::string& aggregate,
                          std::int64_t seq, const std::string& type,
                          nlohmann::json payload,
                          nlohmann::json headers = nlohmann::json::object()) {
    return {id, aggregate, seq, type, std::move(payload), std::move(headers)};
  }

  /// The first event of invoice inv-1: issued for `amount`.
  static sink_event invoice_issued(std::int64_t amount) {
    return event("e-1", "inv-1", 1, "InvoiceIssued", {{"amount", amount}});
  }

  /// Applies `e` alone, at 1000 ms; what became of it.
  static outcome apply_one(sink::sink& to, const sink_event& e) {
    return to.apply({e}, 1000)[0].result;
  }

  std::int64_t count(const std::string& table) {
    return probe_->scalar("SELECT COUNT(*) FROM " + table);
  }

  backend_database db_;
  sink::sink_target target_;
  std::unique_ptr<sql_probe> probe_;
};

TEST_P(SinkStore, EachEffectRunsOnceWithItsInboxRow) {
  auto sink = open();
  auto issued = event("e-1", "inv-1", 1, "InvoiceIssued",
                      {{"amount", 120}, {"detail", {{"lines", 3}}}},
                      {{"tenant", "acme"}});
  auto paid = event("e-2", "inv-1", 2, "InvoicePaid", {{"amount", 100}});
  auto verdicts = sink->apply({issued, paid, paid}, 1000);
  ASSERT_EQ(verdicts.size(), 3u);
  EXPECT_EQ(verdicts[0].result, outcome::applied);
  EXPECT_EQ(verdicts[1].result, outcome::applied);
  EXPECT_EQ(verdicts[2].result, outcome::duplicate) << "a repeat in a batch";
  // Redelivered after a crash between COMMIT and the removal: nothing runs.
  verdicts = sink->apply({issued, paid}, 2000);
  EXPECT_EQ(verdicts[0].result, outcome::duplicate);
  EXPECT_EQ(verdicts[1].result, outcome::duplicate);

  EXPECT_EQ(probe_->scalar("SELECT paid FROM invoices WHERE id = 'inv-1'"),
            100);
  EXPECT_EQ(count("payments"), 1);
  EXPECT_EQ(probe_->text("SELECT tenant FROM invoices"), "acme");
  EXPECT_EQ(probe_->text("SELECT detail FROM invoices"), R"({"lines":3})");
  EXPECT_EQ(count("outbox_inbox WHERE consumer = 'billing:'"), 2);
  EXPECT_EQ(probe_->scalar("SELECT seq FROM outbox_inbox WHERE event_id ="
                           " 'e-2'"),
            2);
}

TEST_P(SinkStore, AMissingValueIsNullAndAnotherConsumerHasItsOwnRows) {
  auto sink = open();
  ASSERT_EQ(apply_one(*sink, invoice_issued(5)), outcome::applied);
  EXPECT_EQ(count("invoices WHERE tenant IS NULL AND detail IS NULL"), 1);
  // Another pipeline's consumer in the same database: its own inbox rows.
  auto other =
      sink::open_sink(target_, "shipping:",
                      sink::parse_sql_effects(
                          "-- effect: InvoiceIssued\nSELECT 1\n", "other.sql"));
  EXPECT_EQ(apply_one(*other, event("e-1", "inv-1", 1, "InvoiceIssued", {})),
            outcome::applied);
  EXPECT_EQ(count("outbox_inbox"), 2);
}

TEST_P(SinkStore, ARefusedStatementTakesBackOnlyItsOwnEvent) {
  auto sink = open();
  auto verdicts =
      sink->apply({event("e-1", "inv-1", 1, "InvoiceIssued", {{"amount", 10}}),
                   event("e-2", "inv-1", 2, "InvoicePaid", {{"amount", -4}}),
                   event("e-3", "inv-2", 1, "InvoiceIssued", {{"amount", 7}})},
                  1000);
  EXPECT_EQ(verdicts[0].result, outcome::applied);
  ASSERT_EQ(verdicts[1].result, outcome::refused);
  // The second statement failed: the first's UPDATE is taken back too.
  EXPECT_THAT(verdicts[1].reason, HasSubstr("effects.sql:6: InvoicePaid: "));
  EXPECT_EQ(verdicts[2].result, outcome::applied);
  EXPECT_EQ(probe_->scalar("SELECT SUM(paid) FROM invoices"), 0);
  EXPECT_EQ(count("payments"), 0);
  EXPECT_EQ(count("outbox_inbox"), 2) << "no row for the refused event";
  // Fixed and applied again (a replay), it runs.
  auto fixed = sink->apply(
      {event("e-2", "inv-1", 2, "InvoicePaid", {{"amount", 4}})}, 2000);
  EXPECT_EQ(fixed[0].result, outcome::applied) << fixed[0].reason;
  EXPECT_EQ(count("payments"), 1);
}

TEST_P(SinkStore, ASinkThatCannotBeUsedIsNamedAtOpen) {
  try {
    open("-- effect: A\nINSERT INTO nowhere VALUES (:seq)\n");
    FAIL() << "opened with a statement on a missing table";
  } catch (const sink::sink_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("effects.sql:2: A: "));
    EXPECT_THAT(e.what(), HasSubstr("nowhere"));
  }
  probe_->exec("DROP TABLE outbox_inbox");
  try {
    open();
    FAIL() << "opened without the inbox table";
  } catch (const sink::sink_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("has no outbox_inbox table: create it "
                                    "with `outbox init --sink"));
  }
}

TEST_P(SinkStore, OldRowsAreListedAndForgotten) {
  auto sink = open();
  sink->apply({invoice_issued(1)}, 1000);
  sink->apply({event("e-2", "inv-2", 1, "InvoiceIssued", {{"amount", 1}})},
              3000);
  sink->apply({event("e-0", "inv-0", 1, "InvoiceIssued", {{"amount", 1}})},
              1000);
  auto old = sink->applied_before(2000, nullptr, 10);
  ASSERT_EQ(old.size(), 2u);
  EXPECT_EQ(old[0].event_id, "e-0") << "by applied_at, then event_id";
  EXPECT_EQ(old[1].event_id, "e-1");
  EXPECT_EQ(old[1].aggregate_id, "inv-1");
  EXPECT_EQ(old[1].seq, 1);
  EXPECT_EQ(old[1].applied_at, 1000);
  // The next page starts after the last row of the one before.
  auto next = sink->applied_before(2000, &old[0], 10);
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(next[0].event_id, "e-1");
  EXPECT_EQ(sink->forget({"e-1", "e-9"}), 1u);
  EXPECT_EQ(count("outbox_inbox"), 2);
}

TEST_P(SinkStore, ASinkThatWentAwayIsUnavailableThenBack) {
  if (GetParam() != backend::postgres) {
    // A SQLite file held by another writer: busy until it lets go.
    probe_->exec("BEGIN IMMEDIATE");
    target_.busy_timeout_ms = 50;
    auto impatient = sink::open_sink(
        target_, "billing:", sink::parse_sql_effects(effects_text, "e.sql"));
    EXPECT_THROW(apply_one(*impatient, invoice_issued(1)),
                 sink::sink_unavailable);
    probe_->exec("COMMIT");
    EXPECT_EQ(apply_one(*impatient, invoice_issued(1)), outcome::applied);
    return;
  }
  auto sink = open();
  db_.server().stop();
  EXPECT_THROW(apply_one(*sink, invoice_issued(1)), sink::sink_unavailable);
  db_.server().start();
  probe_ = sql_probe::open(GetParam(), db_.options());
  // The session reconnects by itself.
  EXPECT_EQ(apply_one(*sink, invoice_issued(1)), outcome::applied);
  EXPECT_EQ(count("invoices"), 1);
}

TEST_P(SinkStore, ATableDroppedSinceTheStartIsRetriedNotBlamedOnTheEvent) {
  auto sink = open();
  probe_->exec("DROP TABLE payments");
  auto paid = event("e-1", "inv-1", 1, "InvoicePaid", {{"amount", 4}});
  EXPECT_THROW(apply_one(*sink, paid), sink::sink_unavailable);
  EXPECT_EQ(count("outbox_inbox"), 0) << "nothing of the batch stays";
  probe_->exec("CREATE TABLE payments (invoice_id TEXT NOT NULL, seq BIGINT"
               " NOT NULL, amount BIGINT NOT NULL CHECK (amount > 0))");
  auto again = sink::open_sink(
      target_, "billing:", sink::parse_sql_effects(effects_text, "e.sql"));
  EXPECT_EQ(apply_one(*again, paid), outcome::applied);
  EXPECT_EQ(count("payments"), 1);
}

TEST_P(SinkStore, TransactionControlInAnEffectIsRefusedAtOpen) {
  EXPECT_THROW(open("-- effect: A\nCOMMIT\n"), sink::sink_error);
  EXPECT_THROW(open("-- effect: A\nSAVEPOINT mine\n"), sink::sink_error);
}

TEST_P(SinkStore, AHeaderNameIsTakenWholeAndAPayloadPathDescends) {
  auto sink =
      open("-- effect: InvoiceIssued\n"
           "INSERT INTO invoices (id, amount, tenant, detail) VALUES"
           " (:aggregate_id, :payload.total.amount, :headers.app.tenant,"
           " :payload.a.b)\n");
  ASSERT_EQ(
      apply_one(*sink, event("e-1", "inv-1", 1, "InvoiceIssued",
                             {{"total", {{"amount", 9}}}, {"a.b", "whole"}},
                             {{"app.tenant", "acme"}})),
      outcome::applied);
  EXPECT_EQ(probe_->text("SELECT tenant FROM invoices"), "acme");
  EXPECT_EQ(probe_->text("SELECT detail FROM invoices"), "whole");
  EXPECT_EQ(probe_->scalar("SELECT amount FROM invoices"), 9);
}

INSTANTIATE_TEST_SUITE_P(Backends, SinkStore,
                         ::testing::Values(backend::sqlite, backend::postgres),
                         backend_name);

} // namespace
} // namespace outbox::test
