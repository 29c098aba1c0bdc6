// Events' headers in PostgreSQL's own SQL (storage/postgres/schema_v8.sql):
// outbox_append takes them and adds a traceparent unless given one, the
// seq trigger refuses what the C++ writers would, in their words, for a
// plain INSERT too, and a version 7 database is migrated keeping its rows.

#include "storage/database.hpp"
#include "storage/postgres/sql_files.hpp"
#include "tests/storage/contract_fixture.hpp"
#include "text/event_headers.hpp"

#include <nlohmann/json.hpp>

#include <stdexcept>
#include <string>

using namespace outbox::storage;

namespace {

using json = nlohmann::json;

class StoragePostgresHeaders : public outbox::test::contract_fixture {
protected:
  StoragePostgresHeaders() {
    // The probe writes with triggers off; these tests need the seq
    // trigger, which checks headers.
    exec("SET session_replication_role = origin");
  }

  json headers_of(const std::string& where) {
    auto text = this->text("SELECT headers::text FROM outbox WHERE " + where);
    return text.empty() ? json{} : json::parse(text);
  }

  /// The error a statement fails with ("" when it does not).
  std::string refusal(const std::string& sql) {
    try {
      exec(sql);
    } catch (const std::exception& e) {
      return e.what();
    }
    return {};
  }
};

INSTANTIATE_TEST_SUITE_P(, StoragePostgresHeaders,
                         ::testing::Values(outbox::test::backend::postgres),
                         outbox::test::backend_name);

} // namespace

TEST_P(StoragePostgresHeaders, OutboxAppendTakesHeadersAndAddsATraceparent) {
  const std::string given =
      "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  exec("SELECT * FROM outbox_append('inv-1', 'InvoiceIssued', '{}')");
  exec("SELECT * FROM outbox_append('inv-1', 'InvoicePaid', '{}',"
       " headers => '{\"tenant\": \"acme\"}')");
  exec("SELECT * FROM outbox_append('inv-1', 'InvoiceSent', '{}',"
       " headers => '{\"traceparent\": \"" +
       given + "\"}')");
  auto issued = headers_of("event_type = 'InvoiceIssued'");
  auto paid = headers_of("event_type = 'InvoicePaid'");
  auto sent = headers_of("event_type = 'InvoiceSent'");
  for (const auto& headers : {issued, paid})
    EXPECT_TRUE(outbox::text::is_traceparent(
        headers.value("traceparent", std::string{})))
        << headers.dump();
  EXPECT_EQ("acme", paid.value("tenant", ""));
  EXPECT_NE(issued["traceparent"], paid["traceparent"]);
  EXPECT_EQ((json{{"traceparent", given}}), sent);
  // outbox_append_once too, and the calls written for version 7.
  exec("SELECT * FROM outbox_append_once('inv-2', 'T', '{}', NULL, NULL,"
       " '{\"tenant\": \"beta\"}')");
  EXPECT_EQ("beta", headers_of("aggregate_id = 'inv-2'").value("tenant", ""));
  exec("SELECT * FROM outbox_append('inv-3', 'T', '{}', NULL, NULL)");
  EXPECT_TRUE(headers_of("aggregate_id = 'inv-3'").contains("traceparent"));
}

TEST_P(StoragePostgresHeaders, TheTriggerRefusesHeadersTheWritersWould) {
  auto append = [this](const std::string& headers) {
    return refusal("SELECT * FROM outbox_append('a', 'T', '{}', headers => '" +
                   headers + "')");
  };
  auto insert = [this](const std::string& headers) {
    return refusal("INSERT INTO outbox (aggregate_id, event_type, payload,"
                   " headers) VALUES ('a', 'T', '{}', '" +
                   headers + "')");
  };
  auto says = [](const std::string& error, const std::string& what) {
    return error.find(what) != std::string::npos;
  };
  EXPECT_PRED2(says, append(R"({"tenant": 7})"),
               "header tenant must be a string (got a JSON number)");
  EXPECT_PRED2(says, insert(R"({"tenant": 7})"),
               "header tenant must be a string (got a JSON number)");
  EXPECT_PRED2(says, insert(R"(["x"])"),
               "headers must be a JSON object (got a JSON array)");
  EXPECT_PRED2(says, insert(R"({"": "x"})"),
               "a header name must be 1 to 128 bytes (got 0)");
  EXPECT_PRED2(says, insert(R"({"a\u0007": "x"})"),
               "header names must be UTF-8 text without control characters");
  EXPECT_PRED2(says, insert(R"({"traceparent": "00-0-0-01"})"),
               "header traceparent must be a W3C traceparent");
  EXPECT_PRED2(says,
               insert("{\"traceparent\": \"00-" + std::string(32, '0') + "-" +
                      std::string(16, 'a') + "-01\"}"),
               "header traceparent must be a W3C traceparent");
  EXPECT_PRED2(says, insert(R"({"tenant": ")" + std::string(4097, 'x') + "\"}"),
               "header tenant must be at most 4096 bytes (got 4097)");
  json many = json::object();
  for (int i = 0; i < 65; ++i)
    many["h" + std::to_string(i)] = "v";
  EXPECT_PRED2(says, insert(many.dump()),
               "headers may hold at most 64 names (got 65)");
  EXPECT_EQ(0, scalar("SELECT count(*) FROM outbox"));
  // A plain insert with good headers keeps them as written, no traceparent
  // added: only outbox_append adds one.
  EXPECT_EQ("", insert(R"({"tenant": "acme"})"));
  EXPECT_EQ((json{{"tenant", "acme"}}), headers_of("aggregate_id = 'a'"));
}

TEST_P(StoragePostgresHeaders, Version7IsMigratedKeepingItsRows) {
  auto target = empty_database("version_7");
  auto probe = outbox::test::sql_probe::open(GetParam(), target);
  probe->exec(std::string{postgres::sql_files::schema} +
              postgres::sql_files::schema_v6 + postgres::sql_files::schema_v7);
  probe->exec("SET session_replication_role = origin;"
              " SELECT * FROM outbox_append('old', 'T', '{}')");
  ASSERT_EQ(7, probe->scalar("SELECT version FROM schema_version"));
  ASSERT_EQ(outbox::storage::connect(target, open_mode::migrated)
                ->found_schema_version(),
            schema_version);
  EXPECT_EQ(schema_version,
            probe->scalar("SELECT version FROM schema_version"));
  EXPECT_EQ("", probe->text("SELECT headers::text FROM outbox"));
  probe->exec("SELECT * FROM outbox_append('new', 'T', '{}')");
  EXPECT_NE("", probe->text("SELECT headers::text FROM outbox WHERE"
                            " aggregate_id = 'new'"));
  EXPECT_EQ(2, probe->scalar("SELECT count(*) FROM outbox"));
}
