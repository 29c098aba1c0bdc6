#include "broker/broker_error.hpp"
#include "broker/inbox.hpp"
#include "broker/inbox_options.hpp"
#include "tests/broker/inbox_fixture.hpp"

#include <gmock/gmock.h>

// The inbox of a consumer whose effects run in its own database
// (consumer.sink): it classifies without writing, records the sink's types
// without an effect of Redis's, sets aside what the sink refused, and will
// not record an entry of a sink type the sink did not apply.

using namespace outbox::broker;
using BrokerInboxSink = outbox::test::inbox_fixture;

namespace {

inbox_options in_sink(std::vector<std::string> types) {
  inbox_options options;
  options.sink_types = std::move(types);
  return options;
}

} // namespace

TEST_F(BrokerInboxSink, ClassifyWritesNothingAndTellsNewFromDuplicate) {
  inbox box{conn(), names_, {}, in_sink({"OrderPlaced"})};
  auto first = order_placed("e1", "o1", 1, "A", 2);
  ASSERT_EQ(box.apply_batch({first}, {{"e1"}, {}, {}})[0].result,
            outcome::applied);
  EXPECT_EQ(reserved("A"), 0) << "its effect ran in the sink, not in Redis";
  auto record = json::parse(hash_field(names_.processed, "e1"));
  EXPECT_FALSE(record.contains("sku")) << record.dump();

  auto second = order_placed("e2", "o1", 2, "A", 1);
  auto before = counter("consumed");
  auto seen = box.classify({first, second, "garbage"});
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_FALSE(seen[0].fresh);
  EXPECT_EQ(seen[0].event_id, "e1");
  EXPECT_EQ(seen[0].event_type, "OrderPlaced");
  EXPECT_TRUE(seen[1].fresh);
  EXPECT_EQ(seen[1].event_id, "e2");
  EXPECT_TRUE(seen[2].fresh) << "malformed: the record call dead-letters it";
  EXPECT_EQ(seen[2].event_id, "");
  EXPECT_EQ(counter("consumed"), before) << "classify writes nothing";
  EXPECT_EQ(hash_field(names_.processed, "e2"), "");
}

TEST_F(BrokerInboxSink, WhatTheSinkRefusedIsSetAside) {
  inbox box{conn(), names_, {}, in_sink({"InvoiceIssued"})};
  auto got = box.apply_batch(
      {follow_up("e1", "inv-1", 1, "InvoiceIssued"),
       follow_up("e2", "inv-1", 2, "InvoiceIssued")},
      {{"e2"}, {{"e1", "shop.sql:2: InvoiceIssued: CHECK failed"}}, {}});
  ASSERT_EQ(got[0].result, outcome::dead_lettered);
  EXPECT_EQ(got[0].reason, "effect failed: shop.sql:2: InvoiceIssued: CHECK "
                           "failed");
  EXPECT_EQ(got[1].result, outcome::applied);
  EXPECT_FALSE(got[1].order_violation) << "the aggregate moved on";
}

TEST_F(BrokerInboxSink, AnEntryTheSinkDidNotApplyIsNeverRecorded) {
  inbox box{conn(), names_, {}, in_sink({"InvoiceIssued"})};
  // Skipped as a duplicate, new by now (a replay meanwhile): taken again.
  auto entry = follow_up("e1", "inv-1", 1, "InvoiceIssued");
  try {
    box.apply_batch({entry}, {{}, {}, {"e1"}});
    FAIL() << "recorded an entry whose effect never ran";
  } catch (const broker_error& e) {
    EXPECT_THAT(e.what(), testing::HasSubstr("OUTBOX_SINK_AGAIN e1"));
  }
  EXPECT_EQ(hash_field(names_.processed, "e1"), "");
  // Not handled for any other reason (the consumer could not read it):
  // set aside, so that it never loops.
  auto got = box.apply_batch({entry}, {});
  ASSERT_EQ(got[0].result, outcome::dead_lettered);
  EXPECT_THAT(got[0].reason, testing::HasSubstr("could not read the entry"));
  EXPECT_EQ(hash_field(names_.processed, "e1"), "");
  // Types outside the sink are recorded as ever.
  EXPECT_EQ(box.apply(follow_up("e2", "inv-2", 1, "InvoicePaid")).result,
            outcome::applied);
}
