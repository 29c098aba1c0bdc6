// Events' headers in the stores, on both backends: written with the row,
// handed to the relay by the claim, listed with a FAILED row; every order
// and every appended event gets a W3C traceparent unless it was given one.

#include "storage/store_error.hpp"
#include "tests/storage/outbox_store_fixture.hpp"
#include "text/event_headers.hpp"

#include <nlohmann/json.hpp>

#include <set>

using namespace outbox::storage;

namespace {

using json = nlohmann::json;

const std::string given_traceparent =
    "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

class StorageEventHeaders : public outbox::test::outbox_store_fixture {
protected:
  /// The headers stored with an event, parsed (null for SQL NULL).
  json stored_headers(const std::string& event_id) {
    auto text = column(event_id, "headers");
    return text == "NULL" ? json{} : json::parse(text);
  }

  /// The trace id of the stored traceparent; fails the test without one.
  std::string trace_of(const std::string& event_id) {
    auto headers = stored_headers(event_id);
    EXPECT_TRUE(headers.is_object()) << headers.dump();
    if (!headers.is_object() || !headers.contains("traceparent"))
      return {};
    auto traceparent = headers["traceparent"].get<std::string>();
    EXPECT_TRUE(outbox::text::is_traceparent(traceparent)) << traceparent;
    return traceparent.substr(3, 32);
  }
};

OUTBOX_ON_BOTH_BACKENDS(StorageEventHeaders);

} // namespace

TEST_P(StorageEventHeaders, EachOrderStartsATraceOfItsOwn) {
  std::set<std::string> traces;
  for (auto sku : {"SKU-1", "SKU-2", "SKU-3"}) {
    auto placed = orders_->place_order({std::nullopt, sku, 1}, 1);
    traces.insert(trace_of(placed.event_id));
  }
  auto batch = orders_->place_orders(
      {{std::string{"k-1"}, "SKU-4", 1}, {std::nullopt, "SKU-5", 2}}, 2);
  for (const auto& placed : batch)
    traces.insert(trace_of(placed.event_id));
  EXPECT_EQ(5u, traces.size()) << "a new trace id per order";
  EXPECT_EQ(0u, traces.count(""));
}

TEST_P(StorageEventHeaders,
       GivenHeadersAreKeptAndATraceparentAddedUnlessGiven) {
  order_request order{std::nullopt, "SKU-1", 1};
  order.headers = R"({"traceparent":")" + given_traceparent + R"("})";
  auto placed = orders_->place_order(order, 1);
  EXPECT_EQ((json{{"traceparent", given_traceparent}}),
            stored_headers(placed.event_id));

  event_request paid{placed.aggregate_id, "OrderPaid", "{}"};
  paid.headers = R"({"tenant":"acme","correlation-id":"c-7"})";
  auto appended = orders_->append_event(paid, 2);
  auto headers = stored_headers(appended.event_id);
  EXPECT_EQ("acme", headers.value("tenant", ""));
  EXPECT_EQ("c-7", headers.value("correlation-id", ""));
  EXPECT_FALSE(trace_of(appended.event_id).empty())
      << "headers without a traceparent get one";

  auto bare = orders_->append_event({"cart-1", "CartOpened", "{}"}, 3);
  EXPECT_FALSE(trace_of(bare.event_id).empty());
  EXPECT_NE(trace_of(bare.event_id), trace_of(appended.event_id))
      << "an event appended on its own starts its own trace";
}

TEST_P(StorageEventHeaders, TheClaimHandsTheRelayTheHeaders) {
  event_request first{"a", "Happened", "{}"};
  first.headers =
      R"({"tenant":"acme","traceparent":")" + given_traceparent + R"("})";
  orders_->append_event(first, 0);
  orders_->append_event({"a", "Happened", "{}"}, 0);
  auto claim = outbox_.claim_batch("relay-1", 0, policy_);
  ASSERT_EQ(2u, claim.events.size());
  EXPECT_EQ((json{{"tenant", "acme"}, {"traceparent", given_traceparent}}),
            json::parse(claim.events[0].headers));
  EXPECT_TRUE(json::parse(claim.events[1].headers).contains("traceparent"));
}

TEST_P(StorageEventHeaders, AFailedRowIsListedWithItsHeaders) {
  event_request request{"a", "Happened", "{}"};
  request.headers =
      R"({"tenant":"acme","traceparent":")" + given_traceparent + R"("})";
  orders_->append_event(request, 0);
  policy_.max_attempts = 1;
  // One claim spends the only attempt; the next finds the lease expired
  // and gives the row up.
  ASSERT_EQ(1u, outbox_.claim_batch("relay-1", 0, policy_).events.size());
  auto gave_up = outbox_.claim_batch("relay-2", 1000, policy_);
  ASSERT_EQ(1u, gave_up.given_up.size());
  EXPECT_EQ("acme",
            json::parse(gave_up.given_up[0].headers).value("tenant", ""));
  auto page = outbox_.failed_rows(0, 10);
  ASSERT_EQ(1u, page.rows.size());
  EXPECT_EQ(given_traceparent,
            json::parse(page.rows[0].headers).value("traceparent", ""));
  ASSERT_EQ(1u, outbox_.stats(1000).failed.size());
  EXPECT_EQ(page.rows[0].headers, outbox_.stats(1000).failed[0].headers);
}

TEST_P(StorageEventHeaders, HeadersTheConsumersCouldNotTrustAreRefused) {
  auto refusal = [this](const std::string& headers) {
    event_request request{"a", "Happened", "{}"};
    request.headers = headers;
    try {
      orders_->append_event(request, 0);
    } catch (const store_error& e) {
      EXPECT_EQ(store_errc::invalid_input, e.code());
      return std::string{e.what()};
    }
    return std::string{"accepted"};
  };
  EXPECT_EQ("headers must be a JSON object (got a JSON array)",
            refusal(R"(["tenant"])"));
  EXPECT_EQ("header tenant must be a string (got a JSON number)",
            refusal(R"({"tenant":7})"));
  EXPECT_EQ("header names must be UTF-8 text without control characters",
            refusal("{\"ten\\u001bant\":\"x\"}"));
  EXPECT_EQ("a header name must be 1 to 128 bytes (got 0)",
            refusal(R"({"":"x"})"));
  EXPECT_EQ("header tenant must be at most 4096 bytes (got 4097)",
            refusal(R"({"tenant":")" + std::string(4097, 'x') + "\"}"));
  EXPECT_EQ(0u, refusal(R"({"traceparent":"00-abc-def-01"})")
                    .find("header traceparent must be a W3C traceparent"));
  json many = json::object();
  for (int i = 0; i < 64; ++i)
    many["h" + std::to_string(i)] = "v";
  // 64 without a traceparent: the one the writer would add makes 65, on
  // both backends alike.
  EXPECT_EQ("headers may hold at most 64 names (got 65)", refusal(many.dump()));
  many["traceparent"] = given_traceparent;
  EXPECT_EQ("headers may hold at most 64 names (got 65)", refusal(many.dump()));
  many.erase("h63");
  EXPECT_EQ("accepted", refusal(many.dump()));
  EXPECT_EQ(1, scalar("SELECT COUNT(*) FROM outbox")) << "the accepted one";
}
