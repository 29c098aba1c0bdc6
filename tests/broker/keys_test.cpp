#include "broker/keys.hpp"

#include <gtest/gtest.h>

#include <set>

using outbox::broker::keys;

TEST(BrokerKeys, OnePartitionIsTheQueueItself) {
  keys names;
  EXPECT_EQ(names.queue_for("order-1"), "outbox.events");
  EXPECT_EQ(names.partition(0), "outbox.events");
  EXPECT_EQ(names.processing_for("outbox.events", "consumer-2"),
            "outbox.processing.outbox.events/consumer-2");
  EXPECT_EQ(names.queue_of("outbox.processing.outbox.events.3/consumer-2"),
            "outbox.events.3");
  EXPECT_FALSE(names.queue_of("outbox.processing.no-slash"));
  EXPECT_FALSE(names.queue_of("elsewhere/consumer-2"));
}

TEST(BrokerKeys, AProcessingListHoldsTheKeyPrefixOnce) {
  keys names;
  names.key_prefix = "p:";
  names.queue = "p:outbox.events";
  names.processing_prefix = "p:outbox.processing.";
  names.partitions = 2;
  auto list = names.processing_for(names.partition(1), "c-1");
  EXPECT_EQ(list, "p:outbox.processing.outbox.events.1/c-1");
  EXPECT_EQ(names.queue_of(list), "p:outbox.events.1");
  // What earlier versions left in flight still finds its queue.
  EXPECT_EQ(names.queue_of("p:outbox.processing.p:outbox.events.1/c-1"),
            "p:outbox.events.1");
}

TEST(BrokerKeys, AQueueNamedLikeThePrefixIsReadThisVersionsWayFirst) {
  keys names;
  names.key_prefix = "outbox.";
  names.queue = "outbox.outbox.events";
  names.processing_prefix = "outbox.outbox.processing.";
  auto list = names.processing_for(names.queue, "c");
  EXPECT_EQ(list, "outbox.outbox.processing.outbox.events/c");
  EXPECT_EQ(names.queue_of(list), "outbox.outbox.events");
  EXPECT_EQ(names.queue_of("outbox.outbox.processing.outbox.outbox.events/c"),
            "outbox.outbox.events")
      << "an earlier version's name";
}

TEST(BrokerKeys, DropDecisionsSitBesideTheDeadLetterList) {
  keys names;
  EXPECT_EQ(names.dead_letter_dropped(), "outbox.dead_letter.dropped");
  names.dead_letter = "p:dl";
  EXPECT_EQ(names.dead_letter_dropped(), "p:dl.dropped");
}

TEST(BrokerKeys, PartitionNames) {
  keys names;
  names.partitions = 4;
  EXPECT_EQ(names.partition(0), "outbox.events.0");
  EXPECT_EQ(names.partition(3), "outbox.events.3");
}

// The partition of an aggregate must be the same in every process and build
// (relays and consumers are separate processes): these values are FNV-1a 64
// of the id, modulo 8, computed independently.
TEST(BrokerKeys, PartitionOfAnAggregateIsStable) {
  keys names;
  names.partitions = 8;
  // FNV-1a 64("a") = 0xaf63dc4c8601ec8c -> % 8 = 4
  EXPECT_EQ(names.queue_for("a"), "outbox.events.4");
  // FNV-1a 64("") = 0xcbf29ce484222325 -> % 8 = 5
  EXPECT_EQ(names.queue_for(""), "outbox.events.5");
  // FNV-1a 64("foobar") = 0x85944171f73967e8 -> % 8 = 0
  EXPECT_EQ(names.queue_for("foobar"), "outbox.events.0");
  EXPECT_EQ(names.queue_for("order-42"), names.queue_for("order-42"));
}

TEST(BrokerKeys, AggregatesSpreadOverPartitions) {
  keys names;
  names.partitions = 4;
  std::set<std::string> used;
  for (int i = 0; i < 100; ++i)
    used.insert(names.queue_for("order-" + std::to_string(i)));
  EXPECT_EQ(used.size(), 4u);
}
