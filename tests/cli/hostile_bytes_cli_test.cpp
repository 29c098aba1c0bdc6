#include "support/refused_command.hpp"
#include "tests/cli/audit_fixture.hpp"
#include "tests/cli/hand_rows.hpp"
#include "text/utf8_file.hpp"

#include <gmock/gmock.h>
#include <hiredis/hiredis.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>
#include <vector>

// Text the pipeline did not write: ids, keys and errors holding escape
// sequences and bytes that are not UTF-8, in Redis and in the database.
// Every command still answers, its JSON parses with a strict parser, and
// nothing it prints reaches a terminal as a raw escape sequence.

namespace outbox::test {
namespace {

using text::is_utf8;

/// An event_id as the issue met it: a byte that is not UTF-8, then "clear
/// the screen".
const std::string hostile = "ev\xff\x1b[2J";
/// How escaped() shows it.
const std::string shown = "ev\\xff\\e[2J";

class CliHostileBytes : public CliAudit {
protected:
  /// A FAILED row whose ids and error hold the hostile bytes, a SENDING row
  /// leased by an owner that does too, and the same in Redis: a processed
  /// record, a processing list, a counter, a reservation, the consumers'
  /// lock and a dead letter.
  void fill_both_stores() {
    place("apple", 1);
    hand_row failed{hostile, "order-" + hostile, 1, "FAILED", 1};
    failed.event_type = "Type\x1b]0;title\x07";
    failed.attempts = 8;
    failed.last_error = "redis said: \x1b[31m" + hostile + "\xc2\x9b";
    insert_row(db_path(), failed);
    hand_row leased{"ev-leased", "order-leased", 1, "SENDING", 1};
    leased.owner = "relay-" + hostile;
    leased.lease_until = 9999999999999;
    insert_row(db_path(), leased);
    conn_.command({"HSET", names_.processed, hostile, "{}"});
    conn_.command({"RPUSH",
                   names_.processing_for(names_.partition(0), "c-" + hostile),
                   "entry " + hostile});
    conn_.command({"HSET", names_.counters, "counter-" + hostile, "1"});
    conn_.command({"HSET", names_.reserved, "sku-" + hostile, "x" + hostile});
    conn_.command(
        {"SET", names_.consumer_lock(), "holder-" + hostile, "PX", "60000"});
    conn_.command({"RPUSH", names_.dead_letter, "junk " + hostile});
    auto entry = nlohmann::json{{"event_id", "e-\x1b[2J"},
                                {"aggregate_id", "order-1"},
                                {"seq", 1},
                                {"event_type", "OrderPlaced"},
                                {"payload", nlohmann::json::object()}};
    conn_.command(
        {"RPUSH", names_.dead_letter,
         nlohmann::json{{"reason", "bad " + hostile},
                        {"entry", entry.dump()},
                        {"size", 10},
                        {"truncated", false}}
             .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)});
  }

  /// Runs `args` against the test's Redis and checks its output (below).
  process_result run_checked(std::vector<std::string> args) {
    auto r = outbox_r(args);
    check_output(args, r);
    return r;
  }

  /// Neither stdout nor stderr carries a raw ESC, a raw CSI or a byte that
  /// is not UTF-8; with --json, stdout parses.
  static void check_output(const std::vector<std::string>& args,
                           const process_result& r) {
    std::string name;
    for (const auto& a : args)
      name += a + " ";
    for (const auto* stream : {&r.out, &r.err}) {
      EXPECT_EQ(stream->find('\x1b'), std::string::npos)
          << name << "printed a raw ESC:\n"
          << *stream;
      EXPECT_EQ(stream->find("\xc2\x9b"), std::string::npos)
          << name << "printed a raw CSI";
      EXPECT_TRUE(is_utf8(*stream)) << name << "printed bytes not UTF-8";
    }
    bool json = std::find(args.begin(), args.end(), "--json") != args.end();
    if (json) {
      auto parsed = nlohmann::json::parse(r.out, nullptr, false);
      EXPECT_FALSE(parsed.is_discarded())
          << name << "printed JSON that does not parse:\n"
          << r.out << r.err;
    }
  }
};

} // namespace

TEST_F(CliHostileBytes, StatusShowsBothStoresEscaped) {
  fill_both_stores();
  auto text = run_checked({"status"});
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("order-" + shown), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("relay-" + shown), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("c-" + shown), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("holder-" + shown), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("counter-" + shown), std::string::npos) << text.out;

  auto json = run_checked({"status", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  auto out = json_of(json);
  // The byte that is not UTF-8 becomes U+FFFD; the rest comes through.
  EXPECT_EQ(out.at("outbox").at("failed").at(0).at("event_id"),
            "ev\xef\xbf\xbd\x1b[2J");
  EXPECT_EQ(out.at("redis").at("consumers_lock").at("holder"),
            "holder-ev\xef\xbf\xbd\x1b[2J");
}

TEST_F(CliHostileBytes, VerifyReportsTheFindingsEscaped) {
  fill_both_stores();
  auto text = run_checked({"verify"});
  EXPECT_EQ(text.exit_code, 1) << text.out << text.err;
  EXPECT_NE(text.out.find("sku-" + shown), std::string::npos) << text.out;

  auto json = run_checked({"verify", "--json"});
  EXPECT_EQ(json.exit_code, 1) << json.err;
  auto out = json_of(json);
  EXPECT_FALSE(out.at("ok").get<bool>());
  EXPECT_NE(out.at("checks").dump().find("sku-ev"), std::string::npos)
      << out.dump();
}

TEST_F(CliHostileBytes, FailedAndDeadLettersListTheRowsEscaped) {
  fill_both_stores();
  auto failed = run_checked({"failed"});
  EXPECT_EQ(failed.exit_code, 0) << failed.err;
  EXPECT_THAT(failed.out, testing::HasSubstr(shown));
  EXPECT_THAT(failed.out, testing::HasSubstr("Type\\e]0;title\\x07"));
  EXPECT_THAT(failed.out, testing::HasSubstr("\\u009b"));
  auto failed_json = run_checked({"failed", "--json"});
  ASSERT_EQ(failed_json.exit_code, 0) << failed_json.err;
  EXPECT_EQ(json_of(failed_json).at("count"), 1);

  auto letters = run_checked({"dead-letters"});
  EXPECT_EQ(letters.exit_code, 0) << letters.err;
  EXPECT_THAT(letters.out, testing::HasSubstr("e-\\e[2J"));
  auto letters_json = run_checked({"dead-letters", "--json"});
  ASSERT_EQ(letters_json.exit_code, 0) << letters_json.err;
  EXPECT_EQ(json_of(letters_json).at("count"), 2);

  // A refusal names the id it was given, escaped.
  auto replay = run_checked({"dead-letters", "replay", hostile});
  EXPECT_EQ(replay.exit_code, 2) << replay.err;
  EXPECT_THAT(replay.err, testing::HasSubstr(shown));
  auto retry = run_checked({"retry", hostile + "x"});
  EXPECT_EQ(retry.exit_code, 2) << retry.err;
  EXPECT_NE(retry.err.find(shown + "x"), std::string::npos) << retry.err;
}

TEST_F(CliHostileBytes, FlagValuesAreEscapedInErrorMessages) {
  place("apple", 1);
  // Each refused, echoing the value it got escaped.
  const std::vector<refused_command> cases{
      {{"place-order", "--sku", "apple", "--qty", hostile}, shown},
      {{"status", "--log-level", hostile}, shown},
      {{"status", "--redis", "host" + hostile}, "host" + shown},
      {{"trim", "--processed-older-than", hostile}, shown},
      {{"purge", "--published-older-than", hostile}, shown},
      {{"status", "--config", "missing-" + hostile + ".json"},
       "missing-" + shown},
  };
  for (const auto& c : cases) {
    // Without the test's --redis: one case gives its own.
    auto r = outbox(c.args);
    check_output(c.args, r);
    expect_refused(c, r);
  }
  auto unknown = outbox_r({hostile});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_EQ(unknown.err.find('\x1b'), std::string::npos) << unknown.err;
  EXPECT_THAT(unknown.err, testing::HasSubstr(shown));
}

} // namespace outbox::test

namespace outbox::test {

TEST_F(CliHostileBytes, ARunThatMeetsSuchAnEntryStillReports) {
  // As the issue met it: an entry with such an event_id, pushed by hand
  // (raw 0xff in its JSON, ESC escaped as \u001b), met by the run's
  // consumer: the log lines and the report must still be written, and
  // carry no raw control byte.
  auto config = write_config("run.json", R"({
    "db": {"busy_timeout_ms": 150},
    "redis": {"io_timeout_ms": 200},
    "lease": {"ttl_ms": 400},
    "run": {"poll_interval_ms": 10, "idle_poll_max_ms": 100,
            "consumer_block_ms": 50}
  })");
  std::string entry = std::string{R"({"event_id":"ev)"} + "\xff" +
                      R"(\u001b[2J","aggregate_id":"order-1","seq":1,)"
                      R"("event_type":"OrderPlaced",)"
                      R"("payload":{"sku":"apple","qty":1}})";
  auto queue = names_.queue_for("order-1");
  conn_.command({"RPUSH", queue, entry});
  conn_.command({"RPUSH", names_.doorbell_for(queue), "1"});
  std::vector<std::string> args{
      "run",  "--until-drained", "--relays", "1",      "--consumers",
      "1",    "--orders",        "0",        "--json", "--config",
      config, "--log-level",     "info"};
  auto r = outbox_r(args);
  check_output(args, r);
  auto report = json_of(r);
  EXPECT_TRUE(report.contains("ok")) << r.out;
  // The inbox script refuses such an id: dead-lettered with the reason,
  // never applied, so the run has nothing to report against it.
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.err,
              testing::HasSubstr("event_id must be UTF-8 text without control "
                                 "characters"));
  EXPECT_EQ(conn_.command({"HLEN", names_.processed})->integer, 0);
  EXPECT_EQ(conn_.command({"LLEN", names_.dead_letter})->integer, 1);
}

} // namespace outbox::test
