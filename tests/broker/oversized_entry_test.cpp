// pop_batch with a limit (broker.max_entry_bytes): an entry over it is
// dead-lettered inside the script, never handed over, and the remove script
// names entries by digest.

#include "broker/dead_letter_record.hpp"
#include "broker/reliable_queue.hpp"

#include "redis_fixture.hpp"

#include <string>
#include <vector>

using namespace outbox::broker;
using outbox::test::redis_fixture;

namespace {

using BrokerOversizedEntry = redis_fixture;
using strings = std::vector<std::string>;

oversized_entries limit(std::size_t max_entry_bytes, std::size_t max_kept) {
  oversized_entries rule;
  rule.max_entry_bytes = max_entry_bytes;
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
                           "broker.max_entry_bytes (10)");
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
