#include "storage/order_store.hpp"
#include "tests/storage/contract_fixture.hpp"

#include <algorithm>
#include <atomic>
#include <future>
#include <map>
#include <mutex>
#include <string>
#include <vector>

// Writers on separate connections at once, as several writer processes (or
// hosts, on PostgreSQL) are: one request key places one order whoever
// races for it, and appends to one aggregate get gap-free seqs that commit
// in seq order.

using namespace outbox::storage;

namespace {

class StorageOrderStoreConcurrency : public outbox::test::contract_fixture {
protected:
  /// Runs `work(i)` on `threads` threads, each on its own connection,
  /// released together; returns what each returned, in thread order.
  template <typename Work>
  auto race(int threads, Work work) {
    using result = decltype(work(0, *db_));
    std::promise<void> go;
    auto gate = go.get_future().share();
    std::vector<std::future<result>> running;
    for (int i = 0; i < threads; ++i)
      running.push_back(std::async(std::launch::async, [this, i, gate, work] {
        auto db = connect(open_mode::existing);
        gate.wait();
        return work(i, *db);
      }));
    go.set_value();
    std::vector<result> results;
    for (auto& r : running)
      results.push_back(r.get()); // rethrows a writer's error
    return results;
  }
};

OUTBOX_ON_BOTH_BACKENDS(StorageOrderStoreConcurrency);

TEST_P(StorageOrderStoreConcurrency,
       OneRequestKeyFromManyConnectionsIsOneOrder) {
  constexpr int writers = 6;
  // Even writers send one request, odd ones the same key with another qty.
  auto request = [](int i) {
    return order_request{"req-race", "SKU-1", i % 2 == 0 ? 1 : 2};
  };
  auto results = race(writers, [&](int i, database& db) {
    return db.orders()->place_order(request(i), 10 + i);
  });
  auto placed = std::count_if(results.begin(), results.end(), [](auto& r) {
    return r.result == placed_order::outcome::placed;
  });
  ASSERT_EQ(placed, 1);
  auto winner = std::find_if(results.begin(), results.end(), [](auto& r) {
    return r.result == placed_order::outcome::placed;
  });
  auto winner_qty = request(static_cast<int>(winner - results.begin())).qty;
  for (int i = 0; i < writers; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(results[i].order_id, winner->order_id);
    EXPECT_EQ(results[i].event_id, winner->event_id);
    if (&results[i] != &*winner) {
      EXPECT_EQ(results[i].result, request(i).qty == winner_qty
                                       ? placed_order::outcome::replayed
                                       : placed_order::outcome::conflict);
    }
  }
  EXPECT_EQ(scalar("SELECT COUNT(*) FROM orders"), 1);
  EXPECT_EQ(scalar("SELECT COUNT(*) FROM outbox"), 1);
  EXPECT_EQ(scalar("SELECT COUNT(*) FROM request_keys"), 1);
  EXPECT_EQ(scalar("SELECT qty FROM orders"), winner_qty);
}

TEST_P(StorageOrderStoreConcurrency, AppendsFromManyConnectionsAreGapFree) {
  constexpr int writers = 4;
  constexpr int appends = 25;
  // The before-commit hook runs while the writer still holds what orders
  // the aggregate's commits (SQLite's write lock, PostgreSQL's head row
  // lock), so the tickets it hands out are the commit order.
  std::atomic<int> next_ticket{0};
  std::mutex mutex;
  std::map<int, std::int64_t> seq_by_ticket;
  race(writers, [&](int, database& db) {
    auto orders = db.orders();
    int ticket = -1;
    orders->set_before_commit([&] { ticket = next_ticket++; });
    for (int n = 0; n < appends; ++n) {
      auto event = orders->append_event({"hot", "Happened", "{}"}, n);
      std::lock_guard<std::mutex> guard{mutex};
      seq_by_ticket[ticket] = event.seq;
    }
    return 0;
  });
  ASSERT_EQ(seq_by_ticket.size(), static_cast<std::size_t>(writers * appends));
  std::int64_t expected = 1;
  for (const auto& [ticket, seq] : seq_by_ticket)
    EXPECT_EQ(seq, expected++) << "commit " << ticket;
  EXPECT_EQ(scalar("SELECT COUNT(DISTINCT seq) FROM outbox"),
            writers * appends);
  EXPECT_EQ(scalar("SELECT MAX(seq) FROM outbox"), writers * appends);
}

} // namespace
