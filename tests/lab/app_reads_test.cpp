#include "lab/app_reads.hpp"

#include "lab/dualwrite_store.hpp"
#include "storage/sqlite/order_store.hpp"
#include "tests/storage/storage_fixture.hpp"

#include <SQLiteCpp/Database.h>

#include <filesystem>
#include <optional>
#include <stdexcept>

namespace outbox::lab {
namespace {

using LabAppReads = test::storage_fixture;
using storage::sqlite::order_store;

TEST_F(LabAppReads, CountsOrdersAndOutboxRowsApart) {
  EXPECT_EQ(count_orders_and_outbox(*db_).orders, 0);
  order_store orders{*db_};
  auto placed = orders.place_order({std::nullopt, "SKU-LAMP", 1}, 1000);
  orders.append_event({placed.aggregate_id, "OrderPaid", "{}"}, 1001);
  orders.place_order({std::nullopt, "SKU-DESK", 2}, 1002);
  auto counts = count_orders_and_outbox(*db_);
  EXPECT_EQ(counts.orders, 2);
  EXPECT_EQ(counts.outbox, 3);
}

TEST_F(LabAppReads, AggregateRowsComeBySeqWithTheirCreationTimes) {
  order_store orders{*db_};
  auto placed = orders.place_order({std::nullopt, "SKU-LAMP", 1}, 1000);
  orders.place_order({std::nullopt, "SKU-DESK", 1}, 1500);
  orders.append_event({placed.aggregate_id, "OrderPaid", "{}"}, 2000);
  orders.append_event({placed.aggregate_id, "OrderShipped", "{}"}, 2000);
  auto rows = read_aggregate_rows(*db_, placed.aggregate_id);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].seq, 1);
  EXPECT_EQ(rows[0].created_at, 1000);
  EXPECT_EQ(rows[1].seq, 2);
  EXPECT_EQ(rows[2].seq, 3);
  EXPECT_EQ(rows[2].created_at, 2000);
  EXPECT_TRUE(read_aggregate_rows(*db_, "order-none").empty());
}

TEST_F(LabAppReads, TheDualWriteStoreKeepsBareOrdersInAPrivateFile) {
  auto path = dir_.file("dualwrite.db");
  dualwrite_store store{path};
  EXPECT_THROW(store.count_orders(), std::logic_error);
  EXPECT_EQ(store.save_order("SKU-DUAL", 1), 1);
  EXPECT_EQ(store.save_order("SKU-DUAL", 1), 2);
  EXPECT_EQ(store.count_orders(), 2);
  using std::filesystem::perms;
  auto mode = std::filesystem::status(path).permissions();
  EXPECT_EQ(mode & (perms::group_all | perms::others_all), perms::none);
  // Not an outbox database: no outbox table beside its orders.
  SQLite::Database raw{path};
  EXPECT_EQ(raw.execAndGet("SELECT COUNT(*) FROM sqlite_master"
                           " WHERE name = 'outbox'")
                .getInt64(),
            0);
}

} // namespace
} // namespace outbox::lab
