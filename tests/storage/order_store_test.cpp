#include "storage/order_store.hpp"

#include "storage/store_error.hpp"
#include "tests/storage/order_store_fixture.hpp"

#include <nlohmann/json.hpp>

// Placing orders: the order and its outbox row together, request keys
// replayed or refused, groups, and the messages of invalid requests.

using namespace outbox::storage;
using StorageOrderStore = outbox::test::order_store_fixture;
using outbox::test::injected_crash;
using outbox::test::is_uuid_v7;

OUTBOX_ON_BOTH_BACKENDS(StorageOrderStore);

// The writer makes the id, with or without a request key: on PostgreSQL
// the keyed path once took a random one from the server.
TEST_P(StorageOrderStore, AKeyedOrdersEventIdIsTheWritersVersion7Id) {
  auto placed = store_.place_order({std::string{"req-1"}, "SKU-1", 3}, 1234);
  ASSERT_EQ(placed_order::outcome::placed, placed.result);
  EXPECT_TRUE(is_uuid_v7(placed.event_id)) << placed.event_id;
  auto again = store_.place_order({std::string{"req-1"}, "SKU-1", 3}, 1300);
  EXPECT_EQ(placed_order::outcome::replayed, again.result);
  EXPECT_EQ(placed.event_id, again.event_id);
}

TEST_P(StorageOrderStore, PlaceOrderWritesOrderAndOutboxRowTogether) {
  auto placed = store_.place_order({std::nullopt, "SKU-1", 3}, 1234);
  EXPECT_EQ(placed_order::outcome::placed, placed.result);
  EXPECT_EQ(1, placed.order_id);
  EXPECT_EQ("order-1", placed.aggregate_id);
  EXPECT_TRUE(is_uuid_v7(placed.event_id)) << placed.event_id;
  EXPECT_EQ("SKU-1|3|1234", text("SELECT sku || '|' || qty || '|' || " +
                                 sql_->ms("created_at") + " FROM orders"));
  ASSERT_EQ(1, outbox_rows());
  auto field = [this](const std::string& column) {
    return text("SELECT " + sql_->as_text(column) + " FROM outbox");
  };
  EXPECT_EQ(placed.event_id, field("event_id"));
  EXPECT_EQ("order-1", field("aggregate_id"));
  EXPECT_EQ("1", field("seq"));
  EXPECT_EQ("OrderPlaced", field("event_type"));
  auto payload = nlohmann::json::parse(field("payload"));
  EXPECT_EQ((nlohmann::json{{"order_id", 1}, {"sku", "SKU-1"}, {"qty", 3}}),
            payload);
  EXPECT_EQ("PENDING", field("status"));
  EXPECT_EQ("1234", field("created_at"));
  EXPECT_EQ("1234", field("available_at"));
  EXPECT_EQ("0", field("attempts"));
  EXPECT_EQ(0, request_keys()); // no request_id, no key
}

TEST_P(StorageOrderStore, ExceptionBeforeCommitLeavesNothing) {
  store_.set_before_commit([] { throw injected_crash{}; });
  EXPECT_THROW(store_.place_order({"req-1", "SKU-1", 1}, 1), injected_crash);
  EXPECT_THROW(store_.place_orders(
                   {{"req-2", "SKU-2", 1}, {std::nullopt, "SKU-3", 1}}, 1),
               injected_crash);
  EXPECT_THROW(store_.append_event({"order-9", "OrderPaid", "{}"}, 1),
               injected_crash);
  EXPECT_EQ(0, orders());
  EXPECT_EQ(0, outbox_rows());
  EXPECT_EQ(0, request_keys());
  // The store stays usable, and the rolled-back key is free again.
  store_.set_before_commit(nullptr);
  auto placed = store_.place_order({"req-1", "SKU-1", 1}, 2);
  EXPECT_EQ(placed_order::outcome::placed, placed.result);
  EXPECT_EQ(1, orders());
  EXPECT_EQ(1, outbox_rows());
  EXPECT_EQ(1, request_keys());
}

TEST_P(StorageOrderStore, SameKeySameParamsIsReplayed) {
  auto first = store_.place_order({"req-1", "SKU-1", 2}, 1);
  auto again = store_.place_order({"req-1", "SKU-1", 2}, 2);
  EXPECT_EQ(placed_order::outcome::placed, first.result);
  EXPECT_EQ(placed_order::outcome::replayed, again.result);
  EXPECT_EQ(first.order_id, again.order_id);
  EXPECT_EQ(first.event_id, again.event_id);
  EXPECT_EQ(first.aggregate_id, again.aggregate_id);
  EXPECT_EQ(1, orders());
  EXPECT_EQ(1, outbox_rows());
  EXPECT_EQ(1, request_keys());
}

TEST_P(StorageOrderStore, SameKeyOtherParamsIsAConflict) {
  auto first = store_.place_order({"req-1", "SKU-1", 2}, 1);
  for (auto other : {order_request{"req-1", "SKU-1", 3},
                     order_request{"req-1", "SKU-2", 2}}) {
    auto conflict = store_.place_order(other, 2);
    EXPECT_EQ(placed_order::outcome::conflict, conflict.result);
    EXPECT_EQ(first.order_id, conflict.order_id);
    EXPECT_EQ(first.event_id, conflict.event_id);
  }
  EXPECT_EQ(1, orders());
  EXPECT_EQ("SKU-1|2", text("SELECT sku || '|' || qty FROM orders"));
  EXPECT_EQ(1, outbox_rows());
  EXPECT_EQ(1, request_keys());
}

TEST_P(StorageOrderStore, RetryAfterALostResponseIsReplayed) {
  // The client never sees this result (response lost), so it retries.
  (void)store_.place_order({"req-lost", "SKU-1", 5}, 1);
  auto event_id = text("SELECT event_id FROM outbox");
  auto retried = store_.place_order({"req-lost", "SKU-1", 5}, 60'000);
  EXPECT_EQ(placed_order::outcome::replayed, retried.result);
  EXPECT_EQ(event_id, retried.event_id);
  EXPECT_EQ(1, orders());
  EXPECT_EQ(1, outbox_rows());
}

TEST_P(StorageOrderStore, DuplicateKeysInOneBatchActAsRetries) {
  auto results = store_.place_orders({{"k", "SKU-1", 1},
                                      {"k", "SKU-1", 1},
                                      {"k", "SKU-1", 2},
                                      {std::nullopt, "SKU-1", 1},
                                      {std::nullopt, "SKU-1", 1}},
                                     1);
  ASSERT_EQ(5u, results.size());
  EXPECT_EQ(placed_order::outcome::placed, results[0].result);
  EXPECT_EQ(placed_order::outcome::replayed, results[1].result);
  EXPECT_EQ(placed_order::outcome::conflict, results[2].result);
  EXPECT_EQ(results[0].event_id, results[1].event_id);
  EXPECT_EQ(results[0].order_id, results[2].order_id);
  // Requests without a key are never deduplicated.
  EXPECT_EQ(placed_order::outcome::placed, results[3].result);
  EXPECT_EQ(placed_order::outcome::placed, results[4].result);
  EXPECT_NE(results[3].event_id, results[4].event_id);
  EXPECT_EQ(3, orders());
  EXPECT_EQ(3, outbox_rows());
  EXPECT_EQ(1, request_keys());
}

// A group is written at once (on PostgreSQL one statement); a request
// whose key was taken before is answered from it, the others placed.
TEST_P(StorageOrderStore, AGroupWithAKeyTakenBeforePlacesTheOthers) {
  auto before = store_.place_order({"b", "SKU-1", 1}, 1);
  auto results = store_.place_orders({{"c", "SKU-3", 3},
                                      {"b", "SKU-1", 1},
                                      {std::nullopt, "SKU-4", 4},
                                      {"a", "SKU-2", 2}},
                                     2);
  ASSERT_EQ(4u, results.size());
  EXPECT_EQ(placed_order::outcome::placed, results[0].result);
  EXPECT_EQ(placed_order::outcome::replayed, results[1].result);
  EXPECT_EQ(before.event_id, results[1].event_id);
  EXPECT_EQ(placed_order::outcome::placed, results[2].result);
  EXPECT_EQ(placed_order::outcome::placed, results[3].result);
  // Each result names its own order, event and aggregate.
  const char* skus[] = {"SKU-3", "SKU-1", "SKU-4", "SKU-2"};
  for (std::size_t i : {0, 2, 3}) {
    const auto& r = results[i];
    EXPECT_EQ("order-" + std::to_string(r.order_id), r.aggregate_id);
    EXPECT_EQ(r.aggregate_id,
              text("SELECT aggregate_id FROM outbox WHERE " +
                   sql_->as_text("event_id") + " = '" + r.event_id + "'"));
    EXPECT_EQ(skus[i], text("SELECT sku FROM orders WHERE id = " +
                            std::to_string(r.order_id)));
    EXPECT_FALSE(r.trace_id.empty());
  }
  EXPECT_EQ(4, orders());
  EXPECT_EQ(4, outbox_rows());
  EXPECT_EQ(3, request_keys());
}

// What the group's arrays carry arrives as written: quotes, backslashes,
// commas and braces in skus, keys and headers.
TEST_P(StorageOrderStore, AGroupKeepsQuotesAndBackslashesAsWritten) {
  std::string key = R"(a"b\c,{d} é)";
  std::string sku = R"(a"b\c,{d})";
  auto results = store_.place_orders(
      {{key, sku, 1, R"({"tenant": "x\"y\\z,{}"})"}, {"plain", "SKU", 2}}, 1);
  ASSERT_EQ(placed_order::outcome::placed, results[0].result);
  EXPECT_EQ(sku, text("SELECT sku FROM orders WHERE id = " +
                      std::to_string(results[0].order_id)));
  EXPECT_EQ(key, text("SELECT request_id FROM request_keys WHERE order_id = " +
                      std::to_string(results[0].order_id)));
  auto payload = nlohmann::json::parse(text(
      "SELECT " + sql_->as_text("payload") +
      " FROM outbox WHERE aggregate_id = '" + results[0].aggregate_id + "'"));
  EXPECT_EQ(sku, payload.at("sku"));
  auto headers = nlohmann::json::parse(text(
      "SELECT " + sql_->as_text("headers") +
      " FROM outbox WHERE aggregate_id = '" + results[0].aggregate_id + "'"));
  EXPECT_EQ("x\"y\\z,{}", headers.at("tenant"));
  EXPECT_TRUE(headers.contains("traceparent"));
  EXPECT_EQ(placed_order::outcome::replayed,
            store_.place_order({key, sku, 1}, 2).result);
}

TEST_P(StorageOrderStore, InvalidRequestInABatchWritesNothing) {
  try {
    store_.place_orders({{std::nullopt, "SKU-1", 1}, {std::nullopt, "SKU", 0}},
                        1);
    FAIL() << "accepted qty 0";
  } catch (const store_error& e) {
    EXPECT_EQ(store_errc::invalid_input, e.code());
    EXPECT_EQ("order request 2: qty must be a positive integer no larger than "
              "1000000 (got 0)",
              std::string{e.what()});
  }
  EXPECT_EQ(0, orders());
  EXPECT_EQ(0, outbox_rows());
}

TEST_P(StorageOrderStore, ValidationMessagesNameTheField) {
  EXPECT_EQ("qty must be a positive integer no larger than 1000000 (got 0)",
            rejection({std::nullopt, "SKU-1", 0}));
  EXPECT_EQ("qty must be a positive integer no larger than 1000000 "
            "(got 1000001)",
            rejection({std::nullopt, "SKU-1", 1'000'001}));
  EXPECT_EQ("qty must be a positive integer no larger than 1000000 (got -5)",
            rejection({std::nullopt, "SKU-1", -5}));
  EXPECT_EQ("sku must not be empty", rejection({std::nullopt, "", 1}));
  EXPECT_EQ("sku must be at most 64 characters (got 65)",
            rejection({std::nullopt, std::string(65, 'x'), 1}));
  EXPECT_EQ("sku must contain only printable ASCII characters without spaces "
            "(bad byte 0x20 at position 4)",
            rejection({std::nullopt, "SKU 1", 1}));
  EXPECT_EQ("sku must contain only printable ASCII characters without spaces "
            "(bad byte 0x0a at position 2)",
            rejection({std::nullopt, "S\n", 1}));
  EXPECT_EQ("request_id must be 1 to 128 bytes long (got 0)",
            rejection({"", "SKU-1", 1}));
  EXPECT_EQ("request_id must be 1 to 128 bytes long (got 129)",
            rejection({std::string(129, 'r'), "SKU-1", 1}));
  EXPECT_EQ("request_id must not contain control characters (at position 3)",
            rejection({std::string{"ab\tc"}, "SKU-1", 1}));
  EXPECT_EQ(0, orders());
  // The limits themselves are accepted.
  EXPECT_FALSE(validate({std::string(128, 'r'), std::string(64, 'x'), 1}));
  EXPECT_FALSE(validate({"clé-ünïcode", "A-1", max_qty}));
}
