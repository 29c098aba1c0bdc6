#include "tests/faults/fault_fixture.hpp"

#include "broker/entry.hpp"
#include "broker/keys.hpp"
#include "config/settings.hpp"
#include "support/pipeline_keys.hpp"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>

#include <thread>

namespace outbox::test {
namespace {

using json = nlohmann::json;

/// Scenario: `outbox trim` deleted an event's dedup record, then a copy of
/// the event arrives anyway (a zombie relay's late push). Dedup must not
/// depend on any clock: the copy is absorbed as a duplicate, whatever its
/// committed_at, because its aggregate is past its seq. And `outbox
/// verify` must see a second effect of one event after a trim, which the
/// reservation totals alone cannot.
class FaultTrimRedelivery : public fault_fixture {
protected:
  void SetUp() override {
    fault_fixture::SetUp();
    // ttl x max_attempts = 1 s: the shortest trim allowed.
    limit_attempts(2);
  }

  process_result outbox(std::vector<std::string> args) const {
    auto c = common();
    args.insert(args.end(), c.begin(), c.end());
    return run_outbox(args, dir_.path().string());
  }

  /// An OrderPlaced row as the relay published it, and its sku and qty.
  struct placed_event {
    broker::event_entry entry;
    std::string sku;
    std::int64_t qty = 0;
  };

  placed_event some_order_placed() const {
    SQLite::Database db{db_path_, SQLite::OPEN_READONLY};
    SQLite::Statement q{db, "SELECT event_id, aggregate_id, seq, payload,"
                            " created_at FROM outbox WHERE event_type ="
                            " 'OrderPlaced' ORDER BY rowid LIMIT 1"};
    if (!q.executeStep())
      throw std::runtime_error("no OrderPlaced row");
    placed_event e;
    e.entry.event_id = q.getColumn(0).getString();
    e.entry.aggregate_id = q.getColumn(1).getString();
    e.entry.seq = q.getColumn(2).getInt64();
    e.entry.event_type = "OrderPlaced";
    e.entry.payload = q.getColumn(3).getString();
    e.entry.committed_at = q.getColumn(4).getInt64();
    auto payload = json::parse(e.entry.payload);
    e.sku = payload.at("sku").get<std::string>();
    e.qty = payload.at("qty").get<std::int64_t>();
    return e;
  }

  std::int64_t reserved(const std::string& sku) const {
    return std::stoll(broker::reply_text(
        *redis().command({"HGET", default_pipeline_keys().reserved, sku})));
  }

  std::int64_t counter(const std::string& name) const {
    auto r = redis().command({"HGET", default_pipeline_keys().counters, name});
    auto text = broker::reply_text(*r);
    return text.empty() ? 0 : std::stoll(text);
  }
};

TEST_F(FaultTrimRedelivery, ACopyOfATrimmedEventIsADuplicate) {
  auto first = run_orders(1, 1, 40);
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  auto event = some_order_placed();
  auto before = reserved(event.sku);

  // Records older than the 1 s trim age, then trimmed.
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  auto trim = outbox({"trim", "--processed-older-than", "1s", "--json"});
  ASSERT_EQ(trim.exit_code, 0) << trim.out << trim.err;
  ASSERT_GT(json::parse(trim.out).at("trimmed").get<int>(), 0) << trim.out;
  // The key names and partitions of the defaults, which the config keeps.
  auto names = default_pipeline_keys();
  ASSERT_EQ(broker::reply_text(*redis().command(
                {"HGET", names.processed, event.entry.event_id})),
            "")
      << "the event's record was not trimmed";

  // Copies come back with any committed_at: from long before the trim's
  // cutoff to the far future.
  auto duplicates = counter("duplicates");
  auto queue = names.queue_for(event.entry.aggregate_id);
  for (std::int64_t committed_at :
       {std::int64_t{0}, event.entry.committed_at, event.entry.committed_at + 1,
        std::int64_t{4'102'444'800'000}}) {
    auto copy = event.entry;
    copy.committed_at = committed_at;
    redis().command({"RPUSH", queue, broker::encode(copy)});
  }
  auto consume =
      run_outbox(run_args({"--relays", "0", "--consumers", "1"}, true),
                 dir_.path().string());
  EXPECT_EQ(consume.exit_code, 0) << consume.out << consume.err;
  EXPECT_EQ(counter("duplicates") - duplicates, 4) << "absorbed, counted";
  EXPECT_EQ(reserved(event.sku), before) << "reserved unchanged";
  EXPECT_EQ(broker::reply_text(*redis().command(
                {"HGET", names.processed, event.entry.event_id})),
            "")
      << "no new record";
  auto verify = outbox({"verify", "--json"});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;

  // A second effect forged behind the inbox's back (its record written
  // again, its quantity reserved again) adds up for the reservations, but
  // not for applied_once.
  redis().command({"HSET", names.processed, event.entry.event_id,
                   json{{"event_type", "OrderPlaced"},
                        {"aggregate_id", event.entry.aggregate_id},
                        {"seq", event.entry.seq},
                        {"sku", event.sku},
                        {"qty", event.qty},
                        {"at", 1}}
                       .dump()});
  redis().command(
      {"HINCRBY", names.reserved, event.sku, std::to_string(event.qty)});
  auto forged = outbox({"verify", "--json"});
  EXPECT_EQ(forged.exit_code, 1) << forged.out << forged.err;
  auto verdict = json::parse(forged.out, nullptr, false);
  ASSERT_FALSE(verdict.is_discarded()) << forged.out << forged.err;
  bool named = false;
  for (const auto& c : verdict.at("checks"))
    if (c.at("name") == "applied_once") {
      EXPECT_EQ(c.at("result"), "failed") << c.dump();
      named = c.at("detail").get<std::string>().find(
                  event.entry.aggregate_id) != std::string::npos;
    }
  EXPECT_TRUE(named) << forged.out;
}

} // namespace
} // namespace outbox::test
