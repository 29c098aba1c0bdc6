#include "storage/order_store.hpp"

#include "storage/sqlite/order_store.hpp"
#include "storage/store_error.hpp"
#include "tests/storage/contract_fixture.hpp"
#include "tests/storage/storage_fixture.hpp"

#include <SQLiteCpp/Database.h>
#include <nlohmann/json.hpp>

#include <cctype>

using namespace outbox::storage;

namespace {

/// Whether `text` is a version 7 UUID in canonical lowercase form.
bool is_uuid_v7(const std::string& text) {
  if (text.size() != 36)
    return false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? c != '-' : !(std::isdigit(c) || (c >= 'a' && c <= 'f')))
      return false;
  }
  return text[14] == '7' &&
         std::string{"89ab"}.find(text[19]) != std::string::npos;
}

/// Thrown by before_commit hooks: not a std::exception, so a test can tell
/// that it propagates unchanged.
struct injected_crash {};

class StorageOrderStore : public outbox::test::contract_fixture {
protected:
  std::int64_t orders() { return scalar("SELECT COUNT(*) FROM orders"); }
  std::int64_t outbox_rows() { return scalar("SELECT COUNT(*) FROM outbox"); }
  std::int64_t request_keys() {
    return scalar("SELECT COUNT(*) FROM request_keys");
  }

  /// The store_error message of an invalid request.
  std::string rejection(const order_request& request) {
    try {
      store_.place_order(request, 1);
    } catch (const store_error& e) {
      EXPECT_EQ(store_errc::invalid_input, e.code());
      return e.what();
    }
    ADD_FAILURE() << "accepted sku=" << request.sku << " qty=" << request.qty;
    return {};
  }

  std::unique_ptr<order_store> orders_ = db_->orders();
  order_store& store_ = *orders_;
};

OUTBOX_ON_BOTH_BACKENDS(StorageOrderStore);

/// SQLite's file lock: SQLite only.
using StorageOrderStoreOnSQLite = outbox::test::storage_fixture;

} // namespace

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

TEST_P(StorageOrderStore, AppendEventAllocatesConsecutiveSeqs) {
  auto placed = store_.place_order({std::nullopt, "SKU-1", 1}, 1);
  auto paid = store_.append_event(
      {placed.aggregate_id, "OrderPaid", R"({"amount":10})"}, 2);
  EXPECT_EQ(2, paid.seq);
  EXPECT_EQ(placed.aggregate_id, paid.aggregate_id);
  EXPECT_NE(placed.event_id, paid.event_id);
  auto cart = store_.append_event({"cart-7", "CartOpened", "{}"}, 3);
  EXPECT_EQ(1, cart.seq) << "seqs are per aggregate";
  // A batch with several events of one aggregate gets consecutive seqs.
  auto batch =
      store_.append_events({{placed.aggregate_id, "OrderShipped", "{}"},
                            {"cart-7", "CartClosed", "{}"},
                            {placed.aggregate_id, "OrderDone", "{}"}},
                           4);
  ASSERT_EQ(3u, batch.size());
  EXPECT_EQ(3, batch[0].seq);
  EXPECT_EQ(2, batch[1].seq);
  EXPECT_EQ(4, batch[2].seq);
  EXPECT_EQ(R"({"amount":10})",
            text("SELECT payload FROM outbox WHERE event_type = 'OrderPaid'"));
}

// A group of appends writes each event_id once: given twice in one group
// or sent again by a retry, it is that row (replayed), and no seq is spent.
TEST_P(StorageOrderStore, AnAppendGroupWritesEachEventIdOnce) {
  const std::string e1 = "018f0000-0000-7000-8000-000000000001";
  const std::string e2 = "018f0000-0000-7000-8000-000000000002";
  const std::string e3 = "018f0000-0000-7000-8000-000000000003";
  auto first = store_.append_events(
      {{"b-1", "T", "{}", e2}, {"a-1", "T", "{}", e1}, {"a-1", "T", "{}", e1}},
      1);
  ASSERT_EQ(3u, first.size());
  EXPECT_FALSE(first[0].replayed);
  EXPECT_FALSE(first[1].replayed);
  EXPECT_TRUE(first[2].replayed);
  EXPECT_EQ(e1, first[2].event_id);
  EXPECT_EQ(1, first[1].seq);
  EXPECT_EQ(1, first[2].seq);
  auto retry =
      store_.append_events({{"b-1", "T", "{}", e2}, {"a-1", "U", "{}", e3}}, 2);
  EXPECT_TRUE(retry[0].replayed);
  EXPECT_EQ(1, retry[0].seq);
  EXPECT_FALSE(retry[1].replayed);
  EXPECT_EQ(2, retry[1].seq) << "no seq spent on a-1 by the repeat";
  EXPECT_EQ(2, store_.append_event({"b-1", "T", "{}"}, 3).seq)
      << "no seq spent on b-1 by the retry";
  EXPECT_EQ(4, outbox_rows());
  // An id that names another aggregate's event: refused, nothing written.
  EXPECT_THROW(
      store_.append_events({{"c-1", "T", "{}"}, {"a-2", "T", "{}", e1}}, 4),
      store_error);
  EXPECT_EQ(4, outbox_rows());
}

TEST_P(StorageOrderStore, AppendEventRejectsBadEvents) {
  auto reject = [this](event_request request, const std::string& message) {
    try {
      store_.append_event(request, 1);
      ADD_FAILURE() << "accepted " << request.payload;
    } catch (const store_error& e) {
      EXPECT_EQ(store_errc::invalid_input, e.code());
      EXPECT_EQ(message, e.what());
    }
  };
  reject({"a-1", "T", "not json"},
         "payload must be a JSON object (got text that is not valid JSON)");
  reject({"a-1", "T", ""},
         "payload must be a JSON object (got text that is not valid JSON)");
  reject({"a-1", "T", "[1,2]"}, "payload must be a JSON object (got a JSON "
                                "array)");
  reject({"a-1", "", "{}"}, "event_type must not be empty");
  reject({"", "T", "{}"}, "aggregate_id must not be empty");
  // Ids and types go into hash fields, log lines and terminals.
  reject({"a\n1", "T", "{}"},
         "aggregate_id must be UTF-8 text without control characters");
  reject({"a-1", "T\x7f", "{}"},
         "event_type must be UTF-8 text without control characters");
  reject({"a\xc2\x85", "T", "{}"},
         "aggregate_id must be UTF-8 text without control characters");
  reject({"a\xff", "T", "{}"}, "aggregate_id must be UTF-8 text without "
                               "control characters (got bytes that are not "
                               "UTF-8)");
  // An OrderPlaced the consumers would dead-letter is refused here, in
  // their words.
  const std::string refused = "an OrderPlaced the consumers would refuse: ";
  reject({"a-1", "OrderPlaced", R"({"sku":"kiwi"})"},
         refused + "payload.qty must be an integer >= 1 (at most 2^53)");
  reject({"a-1", "OrderPlaced", R"({"sku":"kiwi","qty":2.5})"},
         refused + "payload.qty must be an integer >= 1 (at most 2^53)");
  reject({"a-1", "OrderPlaced", R"({"sku":"kiwi","qty":0})"},
         refused + "payload.qty must be an integer >= 1 (at most 2^53)");
  reject({"a-1", "OrderPlaced", R"({"qty":1})"},
         refused + "payload.sku must be a non-empty string");
  reject({"a-1", "OrderPlaced", R"({"sku":"a\u0007","qty":1})"},
         refused + "payload.sku must be UTF-8 text without control characters");
  EXPECT_EQ(0, outbox_rows());
  // What they take passes.
  EXPECT_EQ(1, store_
                   .append_event(
                       {"a-1", "OrderPlaced", R"({"sku":"kiwi","qty":2})"}, 1)
                   .seq);
}

TEST_P(StorageOrderStore, AnAggregateLockedElsewhereIsABusyErrorNamingIt) {
  auto placed = store_.place_order({std::nullopt, "SKU-1", 1}, 1);
  auto options = this->options(50);
  auto db = outbox::storage::connect(options, open_mode::existing);
  auto store = db->orders();
  // Another transaction holds what orders the aggregate's appends: SQLite's
  // write lock, PostgreSQL's head row of the aggregate.
  exec(postgres() ? "BEGIN; SELECT last_seq FROM aggregate_heads"
                    " WHERE aggregate_id = 'order-1' FOR UPDATE"
                  : "BEGIN IMMEDIATE");
  try {
    store->append_event({placed.aggregate_id, "OrderPaid", "{}"}, 2);
    ADD_FAILURE() << "appended while another transaction held the lock";
  } catch (const store_error& e) {
    EXPECT_EQ(store_errc::busy, e.code()) << e.what();
    auto name = postgres()
                    ? "127.0.0.1:" + std::to_string(backend_.server().port()) +
                          "/outbox"
                    : options.path;
    EXPECT_NE(std::string::npos, std::string{e.what()}.find(name)) << e.what();
  }
  exec("ROLLBACK");
  EXPECT_EQ(
      2, store->append_event({placed.aggregate_id, "OrderPaid", "{}"}, 3).seq);
}

TEST_F(StorageOrderStoreOnSQLite, LockedDatabaseIsABusyErrorNamingIt) {
  auto db = outbox::storage::sqlite::open_database(options(50));
  sqlite::order_store store{*db};
  SQLite::Database other{path_, SQLite::OPEN_READWRITE};
  other.exec("BEGIN IMMEDIATE");
  try {
    store.place_order({std::nullopt, "SKU-1", 1}, 1);
    FAIL() << "placed an order while another connection held the lock";
  } catch (const store_error& e) {
    EXPECT_EQ(store_errc::busy, e.code()) << e.what();
    EXPECT_NE(std::string::npos, std::string{e.what()}.find(path_));
  }
  other.exec("ROLLBACK");
  EXPECT_EQ(placed_order::outcome::placed,
            store.place_order({std::nullopt, "SKU-1", 1}, 1).result);
}
