#include "support/refused_command.hpp"
#include "tests/cli/cli_fixture.hpp"

#include <SQLiteCpp/Transaction.h>
#include <gmock/gmock.h>

#include <filesystem>

namespace outbox::test {
namespace {

using CliPlaceOrder = cli_fixture;

TEST_F(CliPlaceOrder, InitCreatesThenFindsItCurrent) {
  auto first = outbox({"init"});
  EXPECT_EQ(first.exit_code, 0) << first.err;
  EXPECT_THAT(first.out, testing::HasSubstr("created"));
  auto second = outbox({"init"});
  EXPECT_EQ(second.exit_code, 0) << second.err;
  EXPECT_THAT(second.out, testing::HasSubstr("already at schema version"));
  EXPECT_EQ(count("orders"), 0);
}

TEST_F(CliPlaceOrder, PrintsOrderAndEvent) {
  auto r = outbox({"place-order", "--sku", "apple", "--qty", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto out = json_of(r);
  EXPECT_GE(out.at("order_id").get<std::int64_t>(), 1);
  EXPECT_FALSE(out.at("event_id").get<std::string>().empty());
  EXPECT_FALSE(out.at("replayed").get<bool>());
  EXPECT_EQ(count("orders"), 1);
  EXPECT_EQ(count("outbox"), 1);
}

TEST_F(CliPlaceOrder, SameRequestIdReplaysTheOriginal) {
  auto first = outbox(
      {"place-order", "--sku", "apple", "--qty", "3", "--request-id", "r-1"});
  auto again = outbox(
      {"place-order", "--sku", "apple", "--qty", "3", "--request-id", "r-1"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(json_of(again).at("order_id"), json_of(first).at("order_id"));
  EXPECT_EQ(json_of(again).at("event_id"), json_of(first).at("event_id"));
  EXPECT_TRUE(json_of(again).at("replayed").get<bool>());
  EXPECT_EQ(count("orders"), 1);
  EXPECT_EQ(count("outbox"), 1);
}

TEST_F(CliPlaceOrder, ConflictingRequestIdExits3AndWritesNothing) {
  ASSERT_EQ(outbox({"place-order", "--sku", "apple", "--qty", "3",
                    "--request-id", "r-1"})
                .exit_code,
            0);
  auto r = outbox(
      {"place-order", "--sku", "apple", "--qty", "4", "--request-id", "r-1"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_THAT(r.err, testing::HasSubstr("r-1"));
  EXPECT_TRUE(r.out.empty());
  EXPECT_EQ(count("orders"), 1);
  EXPECT_EQ(count("outbox"), 1);
}

TEST_F(CliPlaceOrder, BadInputExits2AndCreatesNothing) {
  // Each refused, naming what it got wrong.
  std::vector<refused_command> cases{
      {{"place-order", "--sku", "apple", "--qty", "0"}, "qty"},
      {{"place-order", "--sku", "apple", "--qty", "-1"}, "qty"},
      {{"place-order", "--sku", "apple", "--qty", "2.5"}, "qty"},
      {{"place-order", "--sku", "apple", "--qty", "abc"}, "qty"},
      {{"place-order", "--sku", "apple", "--qty", "99999999999999999999"},
       "qty"},
      {{"place-order", "--sku", "", "--qty", "1"}, "sku"},
      {{"place-order", "--sku", std::string(65, 'x'), "--qty", "1"}, "sku"},
      {{"place-order", "--qty", "1"}, "sku"},
      {{"place-order", "--sku", "apple", "--qty", "1", "--colour", "red"},
       "colour"},
      {{"place-order", "--sku", "apple", "--qty", "1", "--redis", "nohost"},
       "--redis"},
      {{"launch-rockets"}, "launch-rockets"},
      {{}, "no command given"},
  };
  for (const auto& c : cases) {
    auto r = run_outbox(c.args.empty() ? c.args : [&] {
      auto args = c.args;
      args.insert(args.end(), {"--db", db_path()});
      return args;
    }(), dir_.path().string());
    expect_refused(c, r);
  }
  EXPECT_FALSE(std::filesystem::exists(db_path()));
}

TEST_F(CliPlaceOrder, BadConfigFileExits2NamingTheKey) {
  auto config = write_config("bad.json", R"({"lease": {"ttl": 5}})");
  auto r = outbox(
      {"place-order", "--sku", "apple", "--qty", "1", "--config", config});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, testing::HasSubstr("lease.ttl"));
  EXPECT_FALSE(std::filesystem::exists(db_path()));
}

TEST_F(CliPlaceOrder, LockedDatabaseExits1AndWritesNothing) {
  ASSERT_EQ(outbox({"init"}).exit_code, 0);
  auto config =
      write_config("short.json", R"({"db": {"busy_timeout_ms": 200}})");
  SQLite::Database holder{db_path(), SQLite::OPEN_READWRITE};
  {
    SQLite::Transaction lock{holder, SQLite::TransactionBehavior::IMMEDIATE};
    auto r = outbox(
        {"place-order", "--sku", "apple", "--qty", "1", "--config", config});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_THAT(r.err, testing::HasSubstr("lock"));
  }
  EXPECT_EQ(count("orders"), 0);
  EXPECT_EQ(count("outbox"), 0);
}

TEST_F(CliPlaceOrder, UnwritablePathExits1) {
  auto r = run_outbox({"place-order", "--sku", "apple", "--qty", "1", "--db",
                       dir_.file("missing-folder/app.db")},
                      dir_.path().string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, testing::HasSubstr("missing-folder"));
}

} // namespace
} // namespace outbox::test
