#include "contract_fixture.hpp"
#include "storage/database.hpp"
#include "storage/store_error.hpp"

#include <future>
#include <optional>
#include <string>
#include <thread>
#include <vector>

// Creating and upgrading the schema, on both backends: idempotent, safe
// when several processes initialise at once, and refusing what it must not
// touch (a newer schema, tables it did not make).

using namespace outbox::storage;

namespace {

class StorageMigration : public outbox::test::contract_fixture {
protected:
  /// The store_error code `open` throws (or nothing when it does not).
  template <typename Open>
  std::optional<store_errc> error_of(Open open) {
    try {
      open();
    } catch (const store_error& e) {
      return e.code();
    }
    return std::nullopt;
  }
};

OUTBOX_ON_BOTH_BACKENDS(StorageMigration);

TEST_P(StorageMigration, MigratingAgainChangesNothing) {
  auto placed = db_->orders()->place_order({"req-1", "SKU-1", 1}, 1);
  auto identity = db_->identity();
  auto version = db_->found_schema_version();
  EXPECT_GT(version, 0);
  db_->migrate();
  db_->migrate();
  auto again = connect(open_mode::migrated);
  EXPECT_EQ(again->found_schema_version(), version);
  EXPECT_EQ(again->identity().id, identity.id);
  EXPECT_EQ(scalar("SELECT COUNT(*) FROM orders"), 1);
  EXPECT_EQ(scalar("SELECT COUNT(*) FROM database_identity"), 1);
  // The stores of the connection that migrated again still work.
  auto replayed = db_->orders()->place_order({"req-1", "SKU-1", 1}, 2);
  EXPECT_EQ(replayed.result, placed_order::outcome::replayed);
  EXPECT_EQ(replayed.event_id, placed.event_id);
}

TEST_P(StorageMigration, ConnectionsMigratingAtOnceMigrateOnce) {
  constexpr int connections = 4;
  auto target = empty_database("racing");
  std::promise<void> go;
  auto gate = go.get_future().share();
  std::vector<std::future<std::string>> ids;
  for (int i = 0; i < connections; ++i)
    ids.push_back(std::async(std::launch::async, [&target, gate] {
      gate.wait();
      return outbox::storage::connect(target, open_mode::migrated)
          ->identity()
          .id;
    }));
  go.set_value();
  std::vector<std::string> found;
  for (auto& id : ids)
    ASSERT_NO_THROW(found.push_back(id.get()));
  for (const auto& id : found)
    EXPECT_EQ(id, found.front()) << "one identity: the schema ran once";
  EXPECT_EQ(outbox::storage::connect(target, open_mode::existing)
                ->found_schema_version(),
            db_->found_schema_version());
}

TEST_P(StorageMigration, ADatabaseNewerThanTheBinaryIsRefused) {
  if (postgres())
    exec("UPDATE schema_version SET version = " +
         std::to_string(schema_version + 1));
  else
    exec("PRAGMA user_version = " + std::to_string(schema_version + 1));
  for (auto mode :
       {open_mode::existing, open_mode::migrated, open_mode::read_only}) {
    SCOPED_TRACE(static_cast<int>(mode));
    EXPECT_EQ(error_of([&] { connect(mode); }), store_errc::schema);
  }
  EXPECT_EQ(error_of([&] { db_->migrate(); }), store_errc::schema);
}

TEST_P(StorageMigration, ForeignTablesNamedLikeOursAreRefused) {
  auto target = empty_database("foreign_tables");
  auto probe = outbox::test::sql_probe::open(GetParam(), target);
  // Someone else's orders, in a database outbox never initialised.
  probe->exec("CREATE TABLE orders (id integer, note text)");
  probe->exec("INSERT INTO orders VALUES (7, 'theirs')");
  EXPECT_EQ(
      error_of([&] { outbox::storage::connect(target, open_mode::migrated); }),
      store_errc::schema);
  EXPECT_EQ(
      error_of([&] { outbox::storage::connect(target, open_mode::existing); }),
      store_errc::schema);
  EXPECT_FALSE(probe->has_table("outbox")) << "nothing was created";
  EXPECT_EQ(probe->text("SELECT note FROM orders WHERE id = 7"), "theirs");
}

} // namespace
