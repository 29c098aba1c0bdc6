#include "broker/entry_head.hpp"

#include <gtest/gtest.h>

// What a dead-letter listing names of an entry it cannot decode: the
// top-level ids, never a header's value of the same name.

using outbox::broker::read_entry_head;

TEST(BrokerEntryHead, HeadersNamedLikeIdsAreNotTheEntrysIds) {
  auto head = read_entry_head(
      R"({"headers":{"seq":5,"event_id":"h","traceparent":"00-t-s-01"},)"
      R"("event_id":"e1","aggregate_id":"o1","seq":2,"event_type":"T"})");
  EXPECT_EQ(head.event_id, "e1");
  EXPECT_EQ(head.aggregate_id, "o1");
  EXPECT_EQ(head.seq, 2);
  EXPECT_EQ(head.event_type, "T");
  EXPECT_EQ(head.traceparent, "00-t-s-01");
}

TEST(BrokerEntryHead, WhatCameBeforeTheTroubleIsRead) {
  auto head = read_entry_head(
      R"({"event_id":"e1","seq":3.0,"headers":{"traceparent":"tp"},"payl)");
  EXPECT_EQ(head.event_id, "e1");
  EXPECT_EQ(head.seq, 3);
  EXPECT_EQ(head.traceparent, "tp");
  EXPECT_FALSE(head.aggregate_id);
  // A traceparent nested deeper than the headers object is not read.
  EXPECT_FALSE(read_entry_head(R"({"headers":{"x":{"traceparent":"deep"}}})")
                   .traceparent);
}
