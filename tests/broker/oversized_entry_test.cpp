// pop_batch with a limit (broker.max_consume_bytes): an entry over it is
// dead-lettered inside the script, never handed over, and the remove script
// names entries by digest. The consumer's limit is its own, not the relays'
// broker.max_entry_bytes: an entry a relay published with a raised limit is
// applied by a consumer running with the defaults.

#include "adapters/redis_ports.hpp"
#include "broker/dead_letter_record.hpp"
#include "broker/keys.hpp"
#include "broker/publisher.hpp"
#include "broker/reliable_queue.hpp"

#include "tests/broker/event_entries.hpp"
#include "tests/broker/redis_fixture.hpp"

#include <string>
#include <vector>

using namespace outbox::broker;
using outbox::test::redis_fixture;

namespace {

using BrokerOversizedEntry = redis_fixture;

oversized_entries limit(std::size_t max_consume_bytes, std::size_t max_kept) {
  oversized_entries rule;
  rule.max_consume_bytes = max_consume_bytes;
  rule.dead_letter = "dead";
  rule.counters = "counters";
  rule.max_kept = max_kept;
  return rule;
}

TEST_F(BrokerOversizedEntry, IsDeadLetteredWithAPrefixAndItsSizeNotReturned) {
  reliable_queue queue{conn(), {}, limit(10, 4)};
  std::string huge(300 * 1024, 'h');
  conn().command({"RPUSH", "q", "small", huge, "exactly10!", "after"});
  EXPECT_EQ(queue.pop_batch("q", "p", 10, 1 << 20),
            (strings{"small", "exactly10!", "after"}));
  EXPECT_EQ(queue.take_set_aside(), std::vector<std::size_t>{huge.size()});
  EXPECT_TRUE(queue.take_set_aside().empty()) << "taken once";
  EXPECT_EQ(list("p"), (strings{"small", "exactly10!", "after"}));
  auto dead = list("dead");
  ASSERT_EQ(dead.size(), 1u);
  auto record = parse_dead_letter(0, dead[0]);
  EXPECT_TRUE(record.record_problem.empty()) << dead[0];
  EXPECT_EQ(record.entry, "hhhh");
  EXPECT_EQ(record.size, static_cast<std::int64_t>(huge.size()));
  EXPECT_TRUE(record.truncated);
  EXPECT_EQ(record.reason, "entry is 307200 bytes, over "
                           "broker.max_consume_bytes (10)");
  EXPECT_FALSE(record.replayable());
  EXPECT_EQ(hash_integer("counters", "dead_lettered"), 1);
}

TEST_F(BrokerOversizedEntry, CountsInTheBatchSoOneCallSetsAsideFew) {
  reliable_queue queue{conn(), {}, limit(10, 4)};
  std::string big(100, 'b');
  conn().command({"RPUSH", "q", big, big, big, "x"});
  // Two entries' worth per call: both oversized, nothing handed over, and
  // the rest waits for the next call.
  EXPECT_TRUE(queue.pop_batch("q", "p", 2, 1 << 20).empty());
  EXPECT_EQ(queue.take_set_aside().size(), 2u);
  EXPECT_EQ(list("q").size(), 2u);
  // Bytes too: the one over the batch's bytes ends the call.
  EXPECT_TRUE(queue.pop_batch("q", "p", 10, 50).empty());
  EXPECT_EQ(queue.take_set_aside().size(), 1u);
  EXPECT_EQ(queue.pop_batch("q", "p", 10, 50), strings{"x"});
  EXPECT_TRUE(list("p") == strings{"x"});
  EXPECT_EQ(list("dead").size(), 3u);
}

TEST_F(BrokerOversizedEntry, AWrongTypedDeadLetterKeyMovesNothing) {
  reliable_queue queue{conn(), {}, limit(10, 4)};
  conn().command({"SET", "dead", "not a list"});
  conn().command({"RPUSH", "q", std::string(100, 'b')});
  EXPECT_THROW(queue.pop_batch("q", "p", 10, 1 << 20), std::exception);
  EXPECT_EQ(list("q").size(), 1u);
  EXPECT_TRUE(list("p").empty());
}

TEST_F(BrokerOversizedEntry, WithoutALimitEveryEntryIsHandedOver) {
  reliable_queue queue{conn()};
  std::string big(100'000, 'b');
  conn().command({"RPUSH", "q", big});
  EXPECT_EQ(queue.pop_batch("q", "p", 10, 10), strings{big});
  EXPECT_TRUE(queue.take_set_aside().empty());
}

/// A 2 MiB event, published by a relay whose broker.max_entry_bytes was
/// raised to 4 MiB (to let the FAILED row through, as docs/configuration.md
/// says); returns its list.
std::string publish_big_event(connection& conn, const std::string& id) {
  keys relay;
  relay.max_entry_bytes = 4u << 20;
  auto e = outbox::test::event_of(id, "order-big", 1, "OrderPaid",
                                  R"({"amount_cents":1,"note":")" +
                                      std::string(2u << 20, 'n') + R"("})");
  publisher{conn, relay}.publish({e});
  return relay.queue_for(e.aggregate_id);
}

TEST_F(BrokerOversizedEntry,
       AnEntryOverThePublishingLimitIsAppliedWithinTheConsumersLimit) {
  auto queue = publish_big_event(conn(), "big-1");
  // A consumer with the defaults: the relays' 1 MiB limit, its own 16 MiB.
  keys consumer;
  ASSERT_GT(list(queue).at(0).size(), consumer.max_entry_bytes);
  ASSERT_LE(list(queue).at(0).size(), consumer.max_consume_bytes);
  auto port = outbox::adapters::make_redis_consume_port(
      server_->connection_options(), consumer);
  auto processing = consumer.processing_for(queue, "c1");
  auto batch = port->pop_batch(queue, processing, 10, 4u << 20);
  ASSERT_EQ(batch.size(), 1u);
  EXPECT_TRUE(port->take_set_aside().empty());
  auto results = port->apply_batch(batch);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].result, applied_entry::outcome::applied)
      << results[0].reason;
  port->remove_batch(processing, batch);
  EXPECT_FALSE(hash_field(consumer.processed, "big-1").empty());
  EXPECT_TRUE(list(consumer.dead_letter).empty());
  EXPECT_TRUE(list(queue).empty());
  EXPECT_TRUE(list(processing).empty());
}

TEST_F(BrokerOversizedEntry, AnEntryOverTheConsumersLimitIsSetAsideByThePort) {
  auto queue = publish_big_event(conn(), "big-2");
  // broker.max_consume_bytes, not max_entry_bytes, is what the port holds
  // entries to: at 1 MiB it sets the 2 MiB entry aside, unreplayable.
  keys consumer;
  consumer.max_entry_bytes = 1024;
  consumer.max_consume_bytes = 1u << 20;
  auto size = list(queue).at(0).size();
  auto port = outbox::adapters::make_redis_consume_port(
      server_->connection_options(), consumer);
  EXPECT_TRUE(
      port->pop_batch(queue, consumer.processing_for(queue, "c1"), 10, 4u << 20)
          .empty());
  EXPECT_EQ(port->take_set_aside(), std::vector<std::size_t>{size});
  auto dead = list(consumer.dead_letter);
  ASSERT_EQ(dead.size(), 1u);
  auto record = parse_dead_letter(0, dead[0]);
  EXPECT_EQ(record.reason, "entry is " + std::to_string(size) +
                               " bytes, over broker.max_consume_bytes "
                               "(1048576)");
  EXPECT_EQ(record.entry.size(), 65536u);
  EXPECT_FALSE(record.replayable());
  EXPECT_TRUE(hash_field(consumer.processed, "big-2").empty());
}

std::int64_t net_input_bytes(connection& conn) {
  auto text = reply_text(*conn.command({"INFO", "stats"}));
  const std::string field = "total_net_input_bytes:";
  return std::stoll(text.substr(text.find(field) + field.size()));
}

TEST_F(BrokerOversizedEntry, RemoveSendsDigestsNotEntries) {
  reliable_queue queue{conn()};
  std::string big(1 << 20, 'b');
  conn().command({"RPUSH", "p", big, "x"});
  auto before = net_input_bytes(conn());
  // "x" first: not the head, so the script looks the entries up.
  EXPECT_EQ(queue.remove_batch("p", {"x", big}), 2u);
  EXPECT_LT(net_input_bytes(conn()) - before, 64 * 1024);
  EXPECT_TRUE(list("p").empty());
}

TEST_F(BrokerOversizedEntry, RemoveFindsEntriesAnywhereByDigest) {
  reliable_queue queue{conn()};
  // Not the head: the script falls back to finding each one, oldest copy
  // first, and leaves what it was not given.
  conn().command({"RPUSH", "p", "other", "same", "x", "same", "y"});
  EXPECT_EQ(queue.remove_batch("p", {"same", "y", "absent"}), 2u);
  EXPECT_EQ(list("p"), (strings{"other", "x", "same"}));
  // The head: trimmed at once.
  EXPECT_EQ(queue.remove_batch("p", {"other", "x"}), 2u);
  EXPECT_EQ(list("p"), strings{"same"});
}

} // namespace
