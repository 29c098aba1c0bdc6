// The queue entry's JSON Schema (broker/queue_entry.schema.json) is the
// reference for consumers in other languages: entries a real relay writes
// must pass it, and it must refuse what outbox refuses. Validated with
// python3-jsonschema, a package scripts/test installs: when it is missing
// the test fails, naming it, rather than skipping.

#include "broker/connection.hpp"
#include "support/build_paths.hpp"
#include "support/process.hpp"
#include "support/redis_server.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>
#include <hiredis/hiredis.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace outbox::test {
namespace {

std::string schema_path() {
  return source_dir() + "/broker/queue_entry.schema.json";
}

/// Each entry's verdict from the schema, "ok" or "invalid: why", in order.
std::vector<std::string> validate(const temp_dir& dir,
                                  const std::vector<std::string>& entries) {
  auto file = dir.file("entries.jsonl");
  {
    std::ofstream out{file};
    for (const auto& e : entries)
      out << e << '\n';
  }
  auto r = run_process({"/usr/bin/python3",
                        source_dir() + "/tests/broker/validate_entries.py",
                        schema_path(), file});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> verdicts;
  std::istringstream lines{r.out};
  for (std::string line; std::getline(lines, line);)
    verdicts.push_back(line);
  EXPECT_EQ(verdicts.size(), entries.size()) << r.out << r.err;
  return verdicts;
}

/// Every element of every list in Redis but the doorbells (`<list>:ready`):
/// with no consumer running, those are the queue entries.
std::vector<std::string> queued_entries(broker::connection& conn) {
  std::vector<std::string> entries;
  auto keys = conn.command({"KEYS", "*"});
  for (std::size_t i = 0; i < keys->elements; ++i) {
    auto key = broker::reply_text(*keys->element[i]);
    if (broker::reply_text(*conn.command({"TYPE", key})) != "list" ||
        (key.size() > 6 && key.compare(key.size() - 6, 6, ":ready") == 0))
      continue;
    auto items = conn.command({"LRANGE", key, "0", "-1"});
    for (std::size_t k = 0; k < items->elements; ++k)
      entries.push_back(broker::reply_text(*items->element[k]));
  }
  return entries;
}

TEST(BrokerQueueEntrySchema, EntriesARelayWritesPassTheSchema) {
  redis_server redis;
  temp_dir dir{"outbox-schema"};
  std::vector<std::string> where{"--db", dir.file("app.db"), "--redis",
                                 redis.endpoint().to_string()};
  auto with = [&](std::vector<std::string> args) {
    args.insert(args.end(), where.begin(), where.end());
    return args;
  };
  auto init = run_outbox(with({"init"}), dir.path().string());
  ASSERT_EQ(init.exit_code, 0) << init.err;
  // Relays only: the entries stay in the queues to be read.
  auto run = run_outbox(with({"run", "--relays", "1", "--consumers", "0",
                              "--orders", "200", "--until-drained", "--json"}),
                        dir.path().string(), 120'000);
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;

  broker::connection conn{redis.connection_options()};
  auto entries = queued_entries(conn);
  ASSERT_GE(entries.size(), 200u); // orders and their follow-ups
  bool follow_up = false;
  for (const auto& e : entries) {
    auto j = nlohmann::json::parse(e);
    EXPECT_EQ(j.at("v"), 1) << e;
    follow_up = follow_up || j.at("event_type") != "OrderPlaced";
  }
  EXPECT_TRUE(follow_up) << "only OrderPlaced: the schema's other branch "
                            "went untested";
  auto verdicts = validate(dir, entries);
  for (std::size_t i = 0; i < verdicts.size(); ++i)
    EXPECT_EQ(verdicts[i], "ok") << entries[i];
}

TEST(BrokerQueueEntrySchema, AcceptsOlderEntriesAndRefusesWhatOutboxRefuses) {
  temp_dir dir{"outbox-schema"};
  const std::string order =
      R"("event_id":"e-1","aggregate_id":"order-1","seq":1,)"
      R"("event_type":"OrderPlaced","payload":{"sku":"A","qty":2})";
  const std::vector<std::pair<std::string, std::string>> cases{
      // An older relay's entry: no v.
      {"{" + order + "}", "ok"},
      {R"({"v":1,)" + order + R"(,"committed_at":1,"published_at":2})", "ok"},
      {R"({"v":1,"event_id":"e-2","aggregate_id":"a","seq":4.0,)"
       R"("event_type":"OrderPaid","payload":{},"extra":"kept"})",
       "ok"},
      {R"({"v":2,)" + order + "}", "invalid"},
      {R"({"v":"1",)" + order + "}", "invalid"},
      {R"({"v":1,"event_id":"","aggregate_id":"a","seq":1,)"
       R"("event_type":"T","payload":{}})",
       "invalid"},
      {R"({"v":1,"event_id":"e\u001b[2J","aggregate_id":"a","seq":1,)"
       R"("event_type":"T","payload":{}})",
       "invalid"},
      {R"({"v":1,"event_id":"e","aggregate_id":"a","seq":0,)"
       R"("event_type":"T","payload":{}})",
       "invalid"},
      {R"({"v":1,"event_id":"e","aggregate_id":"a","seq":9007199254740993,)"
       R"("event_type":"T","payload":{}})",
       "invalid"},
      {R"({"v":1,"event_id":"e","aggregate_id":"a","seq":1,)"
       R"("event_type":"T","payload":"{}"})",
       "invalid"},
      // A payload is its effect's to judge (the built-in one sets these
      // aside), not the format's.
      {R"({"v":1,"event_id":"e","aggregate_id":"a","seq":1,)"
       R"("event_type":"OrderPlaced","payload":{"sku":"A","qty":0}})",
       "ok"},
      {R"({"v":1,"event_id":"e","aggregate_id":"a","seq":1,)"
       R"("event_type":"OrderPlaced","payload":{"qty":1}})",
       "ok"},
      {R"({"v":1,"event_id":"e","aggregate_id":"a","seq":1,)"
       R"("event_type":"T","payload":{},"published_at":-1})",
       "invalid"},
  };
  std::vector<std::string> entries;
  for (const auto& c : cases)
    entries.push_back(c.first);
  auto verdicts = validate(dir, entries);
  for (std::size_t i = 0; i < verdicts.size() && i < cases.size(); ++i)
    EXPECT_EQ(verdicts[i].substr(0, cases[i].second.size()), cases[i].second)
        << cases[i].first << " -> " << verdicts[i];
}

} // namespace
} // namespace outbox::test
