// The SQL effects file (sink/sql_effects.hpp): sections by event type,
// statements split at `;`, parameters numbered per statement, and every
// mistake named with its file and line.

#include "sink/sql_effects.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace outbox::sink {
namespace {

using testing::ElementsAre;
using testing::HasSubstr;

std::string error_of(const std::string& text) {
  try {
    parse_sql_effects(text, "effects.sql");
  } catch (const sql_effects_error& e) {
    return e.what();
  }
  return "parsed";
}

/// `type`'s section holds one statement, whose one parameter is `parameter`
/// and whose PostgreSQL text keeps each of `fragments` as written.
void expect_one_statement(const sql_effects& effects, const std::string& type,
                          const std::string& parameter,
                          const std::vector<std::string>& fragments) {
  const auto* effect = effects.find(type);
  ASSERT_NE(effect, nullptr) << type;
  ASSERT_EQ(effect->statements.size(), 1u);
  const auto& statement = effect->statements[0];
  EXPECT_THAT(statement.parameters, ElementsAre(parameter));
  for (const auto& fragment : fragments)
    EXPECT_THAT(statement.postgres, HasSubstr(fragment));
}

TEST(SinkSqlEffects, SectionsByTypeWithTheirStatementsAndParameters) {
  auto effects = parse_sql_effects(
      "-- Invoices, in the billing database.\n"
      "\n"
      "-- effect: InvoiceIssued\n"
      "INSERT INTO invoices (id, amount, tenant)\n"
      "  VALUES (:aggregate_id, :payload.amount, :headers.tenant);\n"
      "-- effect: InvoicePaid\n"
      "UPDATE invoices SET paid = paid + :payload.amount::bigint\n"
      " WHERE id = :aggregate_id;\n"
      "INSERT INTO payments VALUES (:aggregate_id, :seq, :payload.amount)\n",
      "effects.sql");
  EXPECT_THAT(effects.types(), ElementsAre("InvoiceIssued", "InvoicePaid"));
  ASSERT_EQ(effects.find("InvoiceIssued")->statements.size(), 1u);
  const auto& issued = effects.find("InvoiceIssued")->statements[0];
  EXPECT_EQ(issued.line, 4);
  EXPECT_THAT(issued.parameters,
              ElementsAre("aggregate_id", "payload.amount", "headers.tenant"));
  EXPECT_EQ(issued.postgres, "INSERT INTO invoices (id, amount, tenant)\n"
                             "  VALUES ($1, $2, $3)");
  EXPECT_EQ(issued.sqlite, "INSERT INTO invoices (id, amount, tenant)\n"
                           "  VALUES (?1, ?2, ?3)");

  const auto& paid = effects.find("InvoicePaid")->statements;
  ASSERT_EQ(paid.size(), 2u);
  // A parameter used twice keeps its number; `::` stays a cast.
  EXPECT_THAT(paid[0].parameters,
              ElementsAre("payload.amount", "aggregate_id"));
  EXPECT_THAT(paid[0].postgres, HasSubstr("paid + $1::bigint"));
  EXPECT_EQ(paid[1].line, 9);
  EXPECT_THAT(paid[1].parameters,
              ElementsAre("aggregate_id", "seq", "payload.amount"));
  EXPECT_EQ(effects.find("InvoiceVoided"), nullptr);
}

TEST(SinkSqlEffects, NothingInQuotesOrCommentsIsAParameterOrAnEnd) {
  auto effects = parse_sql_effects(
      "-- effect: Noted\n"
      "INSERT INTO notes VALUES (':not; a parameter', \"odd:name\",\n"
      "  /* :nor; this */ :event_id, $$ :nor ; this $$, 'it''s') -- :no\n",
      "effects.sql");
  expect_one_statement(effects, "Noted", "event_id",
                       {"':not; a parameter'", "$$ :nor ; this $$"});
}

TEST(SinkSqlEffects, MistakesAreNamedWithTheirLine) {
  EXPECT_EQ(error_of("DELETE FROM x;\n-- effect: A\nSELECT 1\n"),
            "effects.sql:1: a statement before the first `-- effect: <event "
            "type>` line");
  EXPECT_EQ(error_of("-- just a comment\n"),
            "effects.sql: no `-- effect: <event type>` section");
  EXPECT_EQ(error_of("-- effect: A\n-- effect: B\nSELECT 1\n"),
            "effects.sql:1: A has no statement");
  EXPECT_EQ(error_of("-- effect: A\nSELECT 1\n-- effect: A\nSELECT 2\n"),
            "effects.sql:3: A has an effect already, at line 1");
  EXPECT_THAT(error_of("-- effect: A\nSELECT 1;\nSELECT :amount\n"),
              HasSubstr("effects.sql:3: unknown parameter :amount (an event "
                        "gives :event_id"));
  EXPECT_EQ(error_of("-- effect: A\nSELECT 1;\nSELECT 'open\n\n"),
            "effects.sql:3: unterminated string");
  EXPECT_EQ(error_of("-- effect: A\nSELECT /* open\n"),
            "effects.sql:2: unterminated /* comment");
}

TEST(SinkSqlEffects, AFileThatCannotBeUsedIsNamed) {
  try {
    read_sql_effects("/nonexistent/effects.sql");
    FAIL() << "read a missing file";
  } catch (const sql_effects_error& e) {
    EXPECT_THAT(e.what(), HasSubstr("cannot read /nonexistent/effects.sql"));
  }
}

} // namespace
} // namespace outbox::sink

namespace outbox::sink {
namespace {

TEST(SinkSqlEffects, AHeaderInsideACommentOrBodyIsText) {
  auto effects = parse_sql_effects("-- effects of the shop, by type\n"
                                   "-- effect: A\n"
                                   "SELECT /* outer /* nested */\n"
                                   "-- effect: B\n"
                                   "*/ E'it\\'s; :no', $body$\n"
                                   "-- effect: C\n"
                                   "$body$, a$b$c, :payload.customer.id\n",
                                   "effects.sql");
  EXPECT_THAT(effects.types(), ElementsAre("A"));
  expect_one_statement(effects, "A", "payload.customer.id",
                       {"a$b$c, $1", "*/ E'it\\'s; :no'"});
}

TEST(SinkSqlEffects, ANearMissHeaderIsRefused) {
  EXPECT_THAT(error_of("-- effect: A\nSELECT 1\n-- Effect: B\nSELECT 2\n"),
              HasSubstr("effects.sql:3: `-- Effect: B` is not a section "
                        "header"));
  EXPECT_THAT(error_of("-- effect: A\nSELECT 1\n--effect: B\nSELECT 2\n"),
              HasSubstr("effects.sql:3:"));
}

} // namespace
} // namespace outbox::sink
