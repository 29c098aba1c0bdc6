#include "storage/order_store.hpp"

#include "storage/sqlite/order_store.hpp"
#include "storage/store_error.hpp"
#include "tests/storage/order_store_fixture.hpp"
#include "tests/storage/storage_fixture.hpp"

#include <SQLiteCpp/Database.h>

// Appending events to aggregates: consecutive seqs, event ids written
// once, bad events refused, and a lock held elsewhere told as busy.

using namespace outbox::storage;
using StorageOrderStore = outbox::test::order_store_fixture;

/// SQLite's file lock: SQLite only.
using StorageOrderStoreOnSQLite = outbox::test::storage_fixture;

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
