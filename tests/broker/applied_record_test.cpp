#include "broker/applied_record.hpp"

#include <gtest/gtest.h>

using outbox::broker::parse_applied_record;

TEST(BrokerAppliedRecord, ReadsWhatTheInboxScriptWrites) {
  auto r = parse_applied_record(
      R"({"event_type":"OrderPlaced","aggregate_id":"order-1","seq":2,)"
      R"("sku":"A-1","qty":3,"at":1700000000123})");
  ASSERT_TRUE(r);
  EXPECT_EQ("order-1", r->aggregate_id);
  EXPECT_EQ(2, r->seq);
  EXPECT_EQ("OrderPlaced", r->event_type);
  EXPECT_EQ("A-1", r->sku);
  EXPECT_EQ(3, r->qty);
  EXPECT_EQ(1700000000123, r->at);
}

TEST(BrokerAppliedRecord, LeavesOutWhatTheRecordDoesNotSay) {
  // An OrderPaid has no sku or qty; a record without "at" has no age.
  auto r = parse_applied_record(R"({"aggregate_id":"order-1","seq":1})");
  ASSERT_TRUE(r);
  EXPECT_EQ("", r->event_type);
  EXPECT_EQ("", r->sku);
  EXPECT_EQ(0, r->qty);
  EXPECT_FALSE(r->at);
  EXPECT_FALSE(
      parse_applied_record(R"({"aggregate_id":"a","seq":1,"at":"soon"})")->at);
}

TEST(BrokerAppliedRecord, RefusesWhatTheScriptDidNotWrite) {
  for (const auto* text :
       {"", "not json", "[]", R"({"seq":1})", R"({"aggregate_id":"a"})",
        R"({"aggregate_id":7,"seq":1})", R"({"aggregate_id":"a","seq":"1"})",
        R"({"aggregate_id":"a","seq":1.5})"})
    EXPECT_FALSE(parse_applied_record(text)) << text;
}
