// Scenario 6 of the fault suite: garbage pushed straight into the queue
// lists (RPUSH, bypassing the relays): text that is not JSON, objects that
// lack fields or have wrong types, and huge entries. Each must be
// dead-lettered with its reason while the consumers go on with the real
// events queued before and after it.

#include "tests/faults/fault_world.hpp"

#include <gtest/gtest.h>
#include <hiredis/hiredis.h>
#include <nlohmann/json.hpp>

#include <map>
#include <regex>
#include <string>
#include <vector>

namespace outbox::test {
namespace {

using json = nlohmann::json;

/// The inbox script's reasons (broker/lua/inbox_entry.lua).
const std::string not_json = "entry is not valid JSON";
const std::string not_object = "entry must be a JSON object";
const std::string bad_event_id =
    "event_id must be a non-empty string of at most 128 bytes";
const std::string bad_aggregate = "aggregate_id must be a non-empty string";
const std::string bad_seq = "seq must be an integer >= 1 (at most 2^53)";
const std::string bad_type = "event_type must be a non-empty string";
const std::string bad_payload = "payload must be a JSON object";
const std::string bad_published_at = "published_at must be an integer >= 0";

/// The inbox keeps at most this much of a dead entry.
constexpr std::size_t max_kept = 65536;

/// The consumer's pop sets aside an entry over broker.max_consume_bytes
/// (16 MiB by default) unread, with this reason.
std::string too_big(std::size_t size) {
  return "entry is " + std::to_string(size) +
         " bytes, over broker.max_consume_bytes (16777216)";
}

struct garbage {
  std::string entry;
  std::string reason;
};

/// A well-formed entry, but for the changes in `patch` (null erases).
std::string entry_with(const json& patch) {
  json e = {{"event_id", "garbage-1"},
            {"aggregate_id", "garbage-aggregate"},
            {"seq", 1},
            {"event_type", "OrderPaid"},
            {"payload", {{"amount_cents", 1}}}};
  for (const auto& [key, value] : patch.items()) {
    if (value.is_null())
      e.erase(key);
    else
      e[key] = value;
  }
  return e.dump();
}

std::vector<garbage> garbage_entries() {
  auto blob = json{{"blob", std::string(2 << 20, 'y')}}.dump();
  return {
      // Not JSON at all.
      {"this is not json", not_json},
      {"", not_json},
      {"{\"event_id\": \"cut-short\"", not_json},
      {std::string("\xff\xfe\x00 binary", 10), not_json}, // not UTF-8
      {std::string(5000, '['), not_json}, // nesting past cjson's limit
      // JSON, but not an object.
      {"[1, 2, 3]", not_object},
      {"null", not_object},
      {"42", not_object},
      // Fields missing.
      {entry_with({{"event_id", nullptr}}), bad_event_id},
      {entry_with({{"aggregate_id", nullptr}}), bad_aggregate},
      {entry_with({{"seq", nullptr}}), bad_seq},
      {entry_with({{"event_type", nullptr}}), bad_type},
      {entry_with({{"payload", nullptr}}), bad_payload},
      // Wrong types and values.
      {entry_with({{"event_id", 7}}), bad_event_id},
      {entry_with({{"event_id", std::string(200, 'e')}}), bad_event_id},
      {entry_with({{"aggregate_id", ""}}), bad_aggregate},
      {entry_with({{"seq", "1"}}), bad_seq},
      {entry_with({{"seq", 0}}), bad_seq},
      {entry_with({{"seq", 1.5}}), bad_seq},
      {entry_with({{"payload", "{\"amount_cents\": 1}"}}), bad_payload},
      {entry_with({{"published_at", "yesterday"}}), bad_published_at},
      // Huge: megabytes of noise, and a megabyte-sized object without ids,
      // both over broker.max_entry_bytes but within broker.max_consume_bytes:
      // the consumer reads them and the inbox finds what is wrong.
      {std::string(3 << 20, 'x'), not_json},
      {blob, bad_event_id},
      // Over broker.max_consume_bytes: set aside by the pop, unread.
      {std::string(17 << 20, 'z'), too_big(17 << 20)},
  };
}

/// A field of a dead-letter record as written, read without a JSON parser:
/// the record may hold bytes that are not UTF-8 (cjson copies them as they
/// are). A string's text without its quotes, a number's digits; empty if
/// the record has no such field.
std::string raw_field(const std::string& record, const std::string& name) {
  auto key = "\"" + name + "\":";
  auto at = record.find(key);
  if (at == std::string::npos)
    return "";
  at += key.size();
  if (record.compare(at, 1, "\"") == 0)
    return record.substr(at + 1, record.find('"', at + 1) - at - 1);
  return record.substr(at, record.find_first_of(",}", at) - at);
}

class FaultGarbage : public fault_world {
protected:
  void SetUp() override { write_config(); }

  /// A writer and a relay, no consumer: `orders` real orders (with
  /// follow-ups) end up queued.
  void queue_real_orders(int orders) {
    auto r = outbox({"run", "--relays", "1", "--consumers", "0", "--orders",
                     std::to_string(orders), "--until-drained", "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  }
};

TEST_F(FaultGarbage, DeadLettersEveryMalformedEntryAndKeepsConsuming) {
  auto bad = garbage_entries();
  ASSERT_GE(bad.size(), 20u);

  // Real events, then garbage on every partition list, then real events.
  queue_real_orders(40);
  broker::connection redis{redis_->connection_options()};
  constexpr int partitions = 4; // the default of broker.partitions
  for (std::size_t i = 0; i < bad.size(); ++i)
    redis.command({"RPUSH",
                   "pipeline:outbox.events." + std::to_string(i % partitions),
                   bad[i].entry});
  queue_real_orders(40);

  // Consumers only: they meet the garbage between real events.
  auto r = outbox({"run", "--relays", "0", "--consumers", "2",
                   "--until-drained", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto report = json::parse(r.out);
  EXPECT_TRUE(report.at("ok").get<bool>()) << report.dump(2);
  EXPECT_EQ(report.at("dead_lettered"), bad.size());
  EXPECT_EQ(report.at("consumer_restarts"), 0) << "a consumer died on garbage";

  // Every garbage entry is in the dead-letter list once, with its reason;
  // a huge one is kept truncated, with its real size.
  auto records =
      redis.command({"LRANGE", "pipeline:outbox.dead_letter", "0", "-1"});
  ASSERT_EQ(records->elements, bad.size());
  std::map<std::size_t, int> matched;
  for (std::size_t k = 0; k < records->elements; ++k) {
    auto record = broker::reply_text(*records->element[k]);
    auto size = raw_field(record, "size");
    bool found = false;
    for (std::size_t i = 0; i < bad.size() && !found; ++i) {
      if (matched.count(i) || size != std::to_string(bad[i].entry.size()))
        continue;
      // The kept copy is the entry's start; compare as JSON where possible.
      auto parsed = json::parse(record, nullptr, false);
      if (!parsed.is_discarded()) {
        auto kept = parsed.at("entry").get<std::string>();
        bool truncated = bad[i].entry.size() > max_kept;
        if (truncated ? bad[i].entry.compare(0, kept.size(), kept) != 0
                      : bad[i].entry != kept)
          continue;
        EXPECT_EQ(parsed.at("truncated").get<bool>(), truncated)
            << record.substr(0, 200);
        EXPECT_LE(kept.size(), max_kept);
      }
      found = true;
      matched[i] = 1;
      EXPECT_EQ(raw_field(record, "reason"), bad[i].reason)
          << "entry " << i << ": " << bad[i].entry.substr(0, 80);
    }
    EXPECT_TRUE(found) << "unexpected dead-letter record "
                       << record.substr(0, 200);
  }
  EXPECT_EQ(matched.size(), bad.size());

  // `outbox status` counts them, in text and JSON.
  auto status = outbox({"status", "--json"});
  ASSERT_EQ(status.exit_code, 0) << status.err;
  auto broker_part = json::parse(status.out).at("redis");
  EXPECT_EQ(broker_part.at("dead_letter"), bad.size());
  EXPECT_EQ(broker_part.at("counters").at("dead_lettered"), bad.size());
  auto text = outbox({"status"});
  EXPECT_EQ(text.exit_code, 0) << text.err;
  // The REDIS table's row "dead-letter list  N" (padded to the column).
  std::regex dead_letter_row{"\\ndead-letter list +" +
                             std::to_string(bad.size()) + "\\n"};
  EXPECT_TRUE(std::regex_search(text.out, dead_letter_row)) << text.out;

  // The real events, before and after the garbage, all went through once,
  // in order, and `outbox verify` passes.
  auto figures = expect_pipeline_intact(where());
  EXPECT_EQ(figures.dead_lettered, static_cast<std::int64_t>(bad.size()));
  EXPECT_GT(figures.outbox_rows, 80);
  EXPECT_EQ(figures.orphans, 0);
}

// A consumer that dies after the script dead-lettered an entry but before
// it removed it leaves that entry in its processing list; recovered, the
// copy must not make a second record (one record per entry), whatever the
// garbage: one record each, however many crashes.
TEST_F(FaultGarbage, ARecoveredCopyOfGarbageIsNotDeadLetteredTwice) {
  auto bad = garbage_entries();
  queue_real_orders(20);
  broker::connection redis{redis_->connection_options()};
  constexpr int partitions = 4;
  for (std::size_t i = 0; i < bad.size(); ++i)
    redis.command({"RPUSH",
                   "pipeline:outbox.events." + std::to_string(i % partitions),
                   bad[i].entry});

  auto r =
      outbox({"run", "--relays", "0", "--consumers", "2", "--until-drained",
              "--seed", "3", "--crash-consumer-after-effect", "0.4",
              "--crash-recovery-pause-ms", "10", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto report = json::parse(r.out);
  EXPECT_TRUE(report.at("ok").get<bool>()) << report.dump(2);
  // The crashes happened, and their copies came back: absorbed.
  EXPECT_GT(report.at("consumer_restarts").get<int>(), 0);
  EXPECT_GT(report.at("duplicates_absorbed").get<int>(), 0);
  auto records =
      redis.command({"LLEN", "pipeline:outbox.dead_letter"})->integer;
  EXPECT_EQ(records, static_cast<long long>(bad.size()));
  EXPECT_EQ(report.at("dead_lettered"), bad.size());
  auto figures = expect_pipeline_intact(where());
  EXPECT_EQ(figures.dead_lettered, static_cast<std::int64_t>(bad.size()));
}

} // namespace
} // namespace outbox::test
