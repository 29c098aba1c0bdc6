// The inbox script used from outside, as docs/inbox-script.md tells a
// service in another language to: the text and KEYS from `outbox
// inbox-script`, called with redis-cli on hand-written entries. Dedup, the
// effect, dead-lettering and the fence work as documented.

#include "broker/connection.hpp"
#include "support/process.hpp"
#include "support/redis_server.hpp"
#include "support/temp_dir.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <hiredis/hiredis.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace outbox::test {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in{text};
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  return lines;
}

class BrokerInboxScriptFromOutside : public ::testing::Test {
protected:
  void SetUp() override {
    auto source = run_outbox({"inbox-script"}, dir_.path().string());
    ASSERT_EQ(source.exit_code, 0) << source.err;
    std::ofstream{script_} << source.out;
    auto keys = run_outbox({"inbox-script", "--keys"}, dir_.path().string());
    ASSERT_EQ(keys.exit_code, 0) << keys.err;
    keys_ = lines_of(keys.out);
    ASSERT_EQ(keys_.size(), 7u) << keys.out;
  }

  /// redis-cli --eval SCRIPT KEYS... , HOLDER ENTRIES...: its stdout lines
  /// (a reply's items one a line, as redis-cli prints them when piped).
  process_result call(const std::string& holder,
                      const std::vector<std::string>& entries) {
    std::vector<std::string> argv{"/usr/bin/redis-cli",
                                  "-h",
                                  "127.0.0.1",
                                  "-p",
                                  std::to_string(redis_.endpoint().port),
                                  "--eval",
                                  script_};
    argv.insert(argv.end(), keys_.begin(), keys_.end());
    argv.push_back(",");
    argv.push_back(holder);
    argv.insert(argv.end(), entries.begin(), entries.end());
    return run_process(argv);
  }

  std::string command(const std::vector<std::string>& args) {
    return broker::reply_text(*conn_.command(args));
  }

  redis_server redis_;
  temp_dir dir_{"outbox-inbox-script"};
  std::string script_ = dir_.file("inbox.lua");
  std::vector<std::string> keys_;
  broker::connection conn_{redis_.connection_options()};
};

const std::string entry =
    R"({"v":1,"event_id":"py-1","aggregate_id":"py-order-1","seq":1,)"
    R"("event_type":"OrderPlaced","payload":{"sku":"sku-9","qty":2},)"
    R"("committed_at":1764612000000})";

TEST_F(BrokerInboxScriptFromOutside, AppliesOnceAndReportsTheDuplicate) {
  auto first = call("", {entry});
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  EXPECT_EQ(lines_of(first.out),
            (std::vector<std::string>{"ok", "0", "1764612000000"}));
  auto second = call("", {entry});
  ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
  EXPECT_EQ(lines_of(second.out),
            (std::vector<std::string>{"dup", "1764612000000"}));

  // The effect, once; the dedup record and the counters as documented.
  const auto& processed = keys_[0];
  const auto& reserved = keys_[1];
  const auto& aggregate_seq = keys_[2];
  const auto& counters = keys_[3];
  EXPECT_EQ(command({"HGET", reserved, "sku-9"}), "2");
  EXPECT_EQ(command({"HGET", aggregate_seq, "py-order-1"}), "1");
  auto record = nlohmann::json::parse(command({"HGET", processed, "py-1"}));
  EXPECT_EQ(record.at("event_type"), "OrderPlaced");
  EXPECT_EQ(record.at("qty"), 2);
  EXPECT_EQ(command({"HGET", counters, "consumed"}), "1");
  EXPECT_EQ(command({"HGET", counters, "duplicates"}), "1");
}

TEST_F(BrokerInboxScriptFromOutside,
       OlderEntryAppliesAndAMalformedOneIsDeadLettered) {
  // An older relay's entry (no v), then one this script cannot read.
  auto older = nlohmann::json::parse(entry);
  older.erase("v");
  older["event_id"] = "py-2";
  older["seq"] = 2;
  auto newer = older;
  newer["v"] = 2;
  newer["event_id"] = "py-3";
  newer["seq"] = 3;
  auto r = call("", {older.dump(), newer.dump()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(lines_of(r.out),
            (std::vector<std::string>{
                "ok", "1", "1764612000000", "dead",
                "v must be 1 (the queue entry version this consumer reads) "
                "or absent"}));
  // seq 2 before seq 1: applied, and an order violation (the 1 above).
  EXPECT_EQ(command({"HGET", keys_[1], "sku-9"}), "2");
  const auto& dead_letter = keys_[4];
  auto record = nlohmann::json::parse(command({"LINDEX", dead_letter, "0"}));
  EXPECT_EQ(record.at("entry"), newer.dump());
  EXPECT_EQ(record.at("truncated"), false);
}

TEST_F(BrokerInboxScriptFromOutside, FencedCallOfALapsedHolderChangesNothing) {
  const auto& lock = keys_[6];
  command({"SET", lock, "token-a"});
  auto r = call("token-b", {entry});
  EXPECT_THAT(r.out, testing::HasSubstr("OUTBOX_FENCED")) << r.out << r.err;
  EXPECT_EQ(conn_.command({"EXISTS", keys_[0]})->integer, 0);
  auto held = call("token-a", {entry});
  EXPECT_EQ(lines_of(held.out).front(), "ok") << held.out << held.err;
}

} // namespace
} // namespace outbox::test
