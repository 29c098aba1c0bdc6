#include "storage/sqlite/database.hpp"
#include "tests/cli/audit_fixture.hpp"

#include <SQLiteCpp/Database.h>
#include <gmock/gmock.h>

#include <string>
#include <vector>

// What retry, place-order and init say, and their exit codes: a sentence
// when stdout is a terminal (a real pty, through script(1)), JSON when it
// is not or with --json; retry that did only part of what it was asked
// exits 4, one that did nothing exits 2.

namespace outbox::test {
namespace {

class CliTerminalOutput : public CliAudit {
protected:
  /// Runs outbox (with --db and --redis) on a pseudo-terminal: script(1)
  /// gives the command a pty as its stdout and copies what it shows.
  process_result on_terminal(std::vector<std::string> args) {
    args.insert(args.end(),
                {"--db", db_path(), "--redis", redis_.endpoint().to_string()});
    std::string line;
    for (const auto& word : outbox_argv(args))
      line += quoted(word) + " ";
    return run_process({"/usr/bin/script", "-qec", line, "/dev/null"},
                       dir_.path().string());
  }

  static std::string quoted(const std::string& word) {
    std::string out = "'";
    for (char c : word)
      out += c == '\'' ? std::string{"'\\''"} : std::string(1, c);
    return out + "'";
  }
};

TEST_F(CliTerminalOutput, PlaceOrderSaysWhatItDidOnATerminal) {
  auto placed = on_terminal(
      {"place-order", "--sku", "apple", "--qty", "3", "--request-id", "r-1"});
  ASSERT_EQ(placed.exit_code, 0) << placed.out << placed.err;
  EXPECT_THAT(placed.out, testing::HasSubstr("placed order 1 ("));
  EXPECT_THAT(placed.out, testing::HasSubstr("3 x apple"));
  EXPECT_THAT(placed.out,
              testing::HasSubstr("waits in the outbox for a relay"));
  EXPECT_EQ(placed.out.find('{'), std::string::npos) << placed.out;

  auto again = on_terminal(
      {"place-order", "--sku", "apple", "--qty", "3", "--request-id", "r-1"});
  ASSERT_EQ(again.exit_code, 0) << again.out;
  EXPECT_THAT(
      again.out,
      testing::HasSubstr("order 1 was already placed with request_id 'r-1'"));
  EXPECT_THAT(again.out, testing::HasSubstr("nothing new was written"));

  // --json on a terminal, and a pipe without it: the JSON scripts get.
  auto json =
      on_terminal({"place-order", "--sku", "pear", "--qty", "1", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.out;
  EXPECT_EQ(nlohmann::json::parse(json.out).at("order_id"), 2) << json.out;
  auto piped = outbox_r({"place-order", "--sku", "kiwi", "--qty", "1"});
  ASSERT_EQ(piped.exit_code, 0) << piped.err;
  EXPECT_EQ(json_of(piped).at("order_id"), 3);
  EXPECT_FALSE(json_of(piped).at("replayed").get<bool>());
}

TEST_F(CliTerminalOutput, RetrySaysWhatItDidOnATerminal) {
  place("apple", 2);
  auto event_id = fail_next_row("broker refused");
  ASSERT_FALSE(event_id.empty());
  auto r = on_terminal({"retry", event_id});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.out, testing::HasSubstr(
                         "retried 1 FAILED row: back to PENDING with attempts "
                         "reset"));
  EXPECT_EQ(r.out.find('{'), std::string::npos) << r.out;

  auto none = on_terminal({"retry", "--all-failed"});
  ASSERT_EQ(none.exit_code, 0) << none.out;
  EXPECT_THAT(none.out, testing::HasSubstr("no FAILED rows: nothing to retry"));

  auto piped = outbox_r({"retry", "--all-failed"});
  ASSERT_EQ(piped.exit_code, 0) << piped.err;
  EXPECT_EQ(json_of(piped).at("retried"), 0);
}

TEST_F(CliTerminalOutput, RetryOfSomeRowsIsPartlyDoneExit4) {
  place("apple", 2);
  auto event_id = fail_next_row("broker refused");
  ASSERT_FALSE(event_id.empty());

  auto r = outbox_r({"retry", event_id, "no-such-event"});
  EXPECT_EQ(r.exit_code, 4) << r.err;
  auto out = json_of(r);
  EXPECT_EQ(out.at("retried"), 1);
  EXPECT_EQ(out.at("refused"), nlohmann::json::array({"no-such-event"}));
  EXPECT_THAT(r.err,
              testing::HasSubstr("no-such-event is not a FAILED outbox row"));
  EXPECT_THAT(r.err, testing::HasSubstr(
                         "outbox retry: partly done: 1 FAILED row retried, 1 "
                         "refused"));
  auto status = outbox_r({"status", "--json"});
  EXPECT_EQ(json_of(status).at("outbox").at("by_status").at("PENDING"), 1);

  // The same row again is no longer FAILED: nothing done, exit 2.
  auto again = outbox_r({"retry", event_id});
  EXPECT_EQ(again.exit_code, 2) << again.err;
  EXPECT_EQ(json_of(again).at("retried"), 0);
  EXPECT_THAT(again.err,
              testing::HasSubstr("outbox retry: nothing was retried"));
}

TEST_F(CliTerminalOutput, InitSaysWhatItFoundAndDid) {
  auto current = std::to_string(storage::schema_version);
  auto first = outbox({"init"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(first.out,
            "created " + db_path() + " (schema version " + current + ")\n");

  auto second = outbox({"init"});
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(second.out, db_path() + " is already at schema version " + current +
                            ": nothing to do\n");

  // As the version before left it (its migrations are IF NOT EXISTS).
  {
    SQLite::Database db{db_path(), SQLite::OPEN_READWRITE};
    db.exec("PRAGMA user_version = " +
            std::to_string(storage::schema_version - 1));
  }
  auto upgraded = outbox({"init"});
  ASSERT_EQ(upgraded.exit_code, 0) << upgraded.err;
  EXPECT_EQ(upgraded.out, "migrated " + db_path() + " from schema version " +
                              std::to_string(storage::schema_version - 1) +
                              " to " + current + "\n");
}

} // namespace
} // namespace outbox::test
