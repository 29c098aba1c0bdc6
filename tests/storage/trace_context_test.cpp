#include "storage/trace_context.hpp"

#include "text/event_headers.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <set>

using outbox::storage::trace_source;
using outbox::text::is_traceparent;
using outbox::text::trace_id_from;

TEST(StorageTraceContext, EachTraceparentIsANewSampledTraceAndSpan) {
  trace_source traces;
  std::set<std::string> trace_ids, span_ids;
  for (int i = 0; i < 1000; ++i) {
    auto traceparent = traces.new_traceparent();
    ASSERT_TRUE(is_traceparent(traceparent)) << traceparent;
    EXPECT_EQ("-01", traceparent.substr(52)) << "sampled";
    trace_ids.insert(traceparent.substr(3, 32));
    span_ids.insert(traceparent.substr(36, 16));
  }
  EXPECT_EQ(1000u, trace_ids.size());
  EXPECT_EQ(1000u, span_ids.size());
  // Two sources (two stores, two processes) do not repeat each other.
  EXPECT_NE(trace_source{}.new_traceparent(), trace_source{}.new_traceparent());
}

TEST(StorageTraceContext, AGivenTraceparentIsKeptElseOneIsAdded) {
  trace_source traces;
  auto none = nlohmann::json::parse(traces.with_traceparent(""));
  ASSERT_EQ(1u, none.size());
  EXPECT_TRUE(is_traceparent(none["traceparent"].get<std::string>()));

  auto other = nlohmann::json::parse(
      traces.with_traceparent(R"({"tenant":"acme","z":"1"})"));
  EXPECT_EQ("acme", other["tenant"]);
  EXPECT_EQ("1", other["z"]);
  EXPECT_TRUE(is_traceparent(other["traceparent"].get<std::string>()));

  const std::string given =
      R"({"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"})";
  EXPECT_EQ(given, traces.with_traceparent(given)) << "kept byte for byte";
}

TEST(StorageTraceContext, AChildIsAnotherSpanOfTheSameTrace) {
  trace_source traces;
  auto parent = traces.new_traceparent();
  auto trace_id = trace_id_from(parent).value();
  auto first = traces.child_traceparent(trace_id);
  auto second = traces.child_traceparent(trace_id);
  EXPECT_TRUE(is_traceparent(first)) << first;
  EXPECT_EQ(trace_id_from(first), trace_id);
  EXPECT_EQ(trace_id_from(second), trace_id);
  EXPECT_NE(first, second) << "a span id of its own";
  EXPECT_NE(first.substr(36, 16), parent.substr(36, 16));
}
