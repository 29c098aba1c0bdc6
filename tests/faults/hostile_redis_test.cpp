// Redis content the pipeline did not write, through the real binary: an
// entry over broker.max_consume_bytes pushed into a queue, foreign keys under
// the processing prefix, and ids that are not clean text. Each is set aside
// or left alone, with a clear trace, while the run goes on.

#include "support/redis_lists.hpp"
#include "tests/faults/fault_world.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <hiredis/hiredis.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace outbox::test {
namespace {

using json = nlohmann::json;

/// The default of broker.partitions.
constexpr int partitions = 4;
/// A small broker.max_consume_bytes, so a few hundred KiB is far over it,
/// above a smaller broker.max_entry_bytes (the relays' limit) as it must be.
constexpr std::size_t max_entry_bytes = 4096;
constexpr std::size_t max_consume_bytes = 8192;

class FaultHostileRedis : public fault_world {
protected:
  void SetUp() override {
    write_config({{"broker",
                   {{"max_entry_bytes", max_entry_bytes},
                    {"max_consume_bytes", max_consume_bytes}}}});
  }

  /// A writer and a relay, no consumer: `orders` real orders queued.
  void queue_real_orders(int orders) {
    auto r = outbox({"run", "--relays", "1", "--consumers", "0", "--orders",
                     std::to_string(orders), "--until-drained", "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  }

  /// Consumers only, until everything queued is consumed.
  process_result consume_all() {
    return outbox({"run", "--relays", "0", "--consumers", "2",
                   "--until-drained", "--json"});
  }

  std::int64_t net_bytes(const char* field) {
    auto r = redis().command({"INFO", "stats"});
    auto text = broker::reply_text(*r);
    auto at = text.find(std::string{field} + ":");
    EXPECT_NE(at, std::string::npos) << field;
    return std::stoll(text.substr(at + std::string{field}.size() + 1));
  }

  bool processed(const std::string& event_id) {
    return redis()
               .command({"HEXISTS", "pipeline:processed", event_id})
               ->integer == 1;
  }
};

/// A well-formed OrderPaid entry with these ids and a payload of `padding`.
std::string entry(const std::string& event_id, const std::string& aggregate_id,
                  const std::string& padding = "") {
  return json{{"event_id", event_id},
              {"aggregate_id", aggregate_id},
              {"seq", 1},
              {"event_type", "OrderPaid"},
              {"payload", {{"amount_cents", 1}, {"note", padding}}}}
      .dump();
}

TEST_F(FaultHostileRedis, AnOversizedEntryIsDeadLetteredUnreadAndTheRunGoesOn) {
  queue_real_orders(20);
  auto huge = entry("huge-1", "huge-aggregate", std::string(400 * 1024, 'h'));
  ASSERT_GT(huge.size(), 40 * max_consume_bytes);
  redis().command({"RPUSH", "pipeline:outbox.events.0", huge});
  queue_real_orders(20);

  // What Redis sends and receives while the consumers run: had a consumer
  // popped the entry (or sent it back to remove it), one of these would
  // have grown by its size at least.
  auto sent_before = net_bytes("total_net_output_bytes");
  auto received_before = net_bytes("total_net_input_bytes");
  auto r = consume_all();
  auto sent = net_bytes("total_net_output_bytes") - sent_before;
  auto received = net_bytes("total_net_input_bytes") - received_before;
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto report = json::parse(r.out);
  EXPECT_TRUE(report.at("ok").get<bool>()) << report.dump(2);
  EXPECT_EQ(report.at("dead_lettered"), 1);
  EXPECT_EQ(report.at("consumer_restarts"), 0);
  EXPECT_LT(sent, static_cast<std::int64_t>(huge.size()) / 2);
  EXPECT_LT(received, static_cast<std::int64_t>(huge.size()) / 2);
  EXPECT_NE(r.err.find("over broker.max_consume_bytes (8192) without reading "
                       "it (" +
                       std::to_string(huge.size()) + " bytes)"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(processed("huge-1"));

  // The record keeps a prefix and the size; it cannot be replayed.
  auto listed = outbox({"dead-letters", "--json"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  auto letters = json::parse(listed.out);
  ASSERT_EQ(letters.at("count"), 1) << listed.out;
  auto& record = letters.at("dead_letters").at(0);
  EXPECT_EQ(record.at("event_id"), "huge-1") << record.dump(2);
  EXPECT_EQ(record.at("size"), huge.size());
  EXPECT_EQ(record.at("truncated"), true);
  EXPECT_EQ(record.at("replayable"), false);
  EXPECT_EQ(record.at("reason"),
            "entry is " + std::to_string(huge.size()) +
                " bytes, over broker.max_consume_bytes (8192)");
  auto kept = record.at("entry").get<std::string>();
  EXPECT_EQ(kept, huge.substr(0, max_consume_bytes));
  auto stored = redis().command({"LINDEX", "pipeline:outbox.dead_letter", "0"});
  EXPECT_LT(stored->len, 2 * max_consume_bytes);
  auto table = outbox({"dead-letters"});
  EXPECT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, testing::HasSubstr("huge-1"));

  auto replay = outbox({"dead-letters", "replay", "huge-1"});
  EXPECT_EQ(replay.exit_code, 2) << replay.out << replay.err;
  EXPECT_NE((replay.out + replay.err).find("truncated"), std::string::npos)
      << replay.out << replay.err;
  EXPECT_EQ(redis().command({"LLEN", "pipeline:outbox.dead_letter"})->integer,
            1);

  // The real events all went through once, in order.
  auto figures = expect_pipeline_intact(where());
  EXPECT_EQ(figures.dead_lettered, 1);
  EXPECT_GT(figures.outbox_rows, 40);
}

TEST_F(FaultHostileRedis, ForeignKeysUnderTheProcessingPrefixAreLeftAlone) {
  ASSERT_EQ(outbox({"init"}).exit_code, 0);
  // Named after another key, after a partition that is not configured, a
  // key of the wrong type with a processing list's name, and a name that
  // would move the terminal's cursor if logged raw.
  const std::string prefix = "pipeline:outbox.processing.";
  const std::string after_hash = prefix + "pipeline:processed/x";
  const std::string no_partition = prefix + "pipeline:outbox.events.9/ghost";
  const std::string wrong_type = prefix + "pipeline:outbox.events.0/ghost";
  const std::string escape = "pipeline:outbox.processing.\x1b[2J/ghost";
  redis().command({"RPUSH", after_hash, "junk"});
  redis().command({"RPUSH", no_partition, entry("ghost-1", "ghost")});
  redis().command({"HSET", wrong_type, "field", "value"});
  redis().command({"SET", escape, "x"});

  auto r = outbox({"run", "--relays", "1", "--consumers", "2", "--orders", "20",
                   "--until-drained", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto report = json::parse(r.out);
  EXPECT_TRUE(report.at("ok").get<bool>()) << report.dump(2);
  EXPECT_GT(report.at("applied_here").get<std::int64_t>(), 20)
      << "the consumers started and consumed";

  // One warning names them all; the escape is not written raw.
  EXPECT_THAT(r.err,
              testing::HasSubstr(
                  "recovery leaves 4 keys under broker.processing_prefix "
                  "alone"));
  for (const auto& key : {after_hash, no_partition, wrong_type})
    EXPECT_THAT(r.err, testing::HasSubstr(key)) << key << "\n" << r.err;
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << "a raw escape logged";

  // Untouched.
  auto conn = redis();
  auto items = [&](const std::string& key) { return list_items(conn, key); };
  EXPECT_EQ(items(after_hash), std::vector<std::string>{"junk"});
  EXPECT_EQ(items(no_partition),
            std::vector<std::string>{entry("ghost-1", "ghost")});
  EXPECT_EQ(broker::reply_text(*redis().command({"HGET", wrong_type, "field"})),
            "value");
  EXPECT_EQ(broker::reply_text(*redis().command({"GET", escape})), "x");
  EXPECT_EQ(redis().command({"TYPE", "pipeline:processed"})->str,
            std::string{"hash"});

  auto figures = expect_pipeline_intact(where());
  EXPECT_EQ(figures.dead_lettered, 0);
  EXPECT_GT(figures.processed, 20);
}

TEST_F(FaultHostileRedis, IdsThatAreNotTextAreDeadLetteredNotApplied) {
  queue_real_orders(20);
  // Raw bytes: nlohmann writes only UTF-8, so they go in by hand.
  auto raw = [](std::string text, const std::string& marker,
                const std::string& bytes) {
    text.replace(text.find(marker), marker.size(), bytes);
    return text;
  };
  const std::string reason = " must be UTF-8 text without control characters";
  struct hostile {
    std::string entry;
    std::string event_id; // as it would be keyed
    std::string field;
  };
  const std::vector<hostile> bad{
      {raw(entry("@ID@", "agg-x"), "@ID@", "ev\xff\x1b[2J"), "ev\xff\x1b[2J",
       "event_id"},
      {entry("ev\x1b[2J", "agg-y"), "ev\x1b[2J", "event_id"},
      {raw(entry("ev-agg", "@AGG@"), "@AGG@", "order\xfe"), "ev-agg",
       "aggregate_id"},
  };
  for (std::size_t i = 0; i < bad.size(); ++i)
    redis().command({"RPUSH",
                     "pipeline:outbox.events." + std::to_string(i % partitions),
                     bad[i].entry});
  queue_real_orders(20);

  auto r = consume_all();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto report = json::parse(r.out);
  EXPECT_TRUE(report.at("ok").get<bool>()) << report.dump(2);
  EXPECT_EQ(report.at("dead_lettered"), bad.size());
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << "a raw escape logged";

  // Not applied: no dedup record, no seq.
  for (const auto& b : bad)
    EXPECT_FALSE(processed(b.event_id)) << b.field;
  for (const char* aggregate : {"agg-x", "agg-y"})
    EXPECT_EQ(
        redis()
            .command({"HEXISTS", "pipeline:outbox.aggregate_seq", aggregate})
            ->integer,
        0)
        << aggregate;

  // Each dead-lettered with the field named.
  auto records =
      redis().command({"LRANGE", "pipeline:outbox.dead_letter", "0", "-1"});
  ASSERT_EQ(records->elements, bad.size());
  for (std::size_t i = 0; i < bad.size(); ++i) {
    auto record = broker::reply_text(*records->element[i]);
    bool named = false;
    for (const auto& b : bad)
      named = named || record.find("\"reason\":\"" + b.field + reason + "\"") !=
                           std::string::npos;
    EXPECT_TRUE(named) << record;
  }

  // The commands that read them back still answer, with JSON.
  for (std::vector<std::string> command :
       {std::vector<std::string>{"status", "--json"},
        std::vector<std::string>{"verify", "--json"},
        std::vector<std::string>{"dead-letters", "--json"}}) {
    auto out = outbox(command);
    EXPECT_EQ(out.exit_code, 0) << command[0] << ": " << out.out << out.err;
    EXPECT_FALSE(json::parse(out.out, nullptr, false).is_discarded())
        << command[0] << ": " << out.out;
  }
  auto figures = expect_pipeline_intact(where());
  EXPECT_EQ(figures.dead_lettered, static_cast<std::int64_t>(bad.size()));
}

} // namespace
} // namespace outbox::test
