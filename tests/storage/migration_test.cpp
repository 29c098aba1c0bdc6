#include "storage/database.hpp"
#include "storage/postgres/sql_files.hpp"
#include "storage/store_error.hpp"
#include "tests/storage/contract_fixture.hpp"

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

namespace {

// PostgreSQL only: the ids it makes itself (outbox_append without an id, a
// plain INSERT) are version 7 UUIDs since schema version 6, like the
// writers' (storage/event_ids.cpp); SQLite makes no ids of its own.
class StorageMigrationOnPostgreSQL : public StorageMigration {
protected:
  /// The milliseconds since the epoch in a version 7 UUID's first 48 bits.
  static std::int64_t millis_of(const std::string& uuid) {
    auto hex = uuid.substr(0, 8) + uuid.substr(9, 4);
    return std::stoll(hex, nullptr, 16);
  }

  /// An id outbox_append makes on `probe`'s database, checked to be a
  /// version 7 UUID of the database's clock at the call.
  static std::string expect_made_id(outbox::test::sql_probe& probe) {
    // The probe writes with triggers off; outbox_append needs the one
    // that allocates seqs.
    probe.exec("SET session_replication_role = origin");
    auto before = probe.scalar("SELECT outbox_ms(clock_timestamp())");
    auto id = probe.text("SELECT event_id FROM outbox_append('made', 'T',"
                         " '{}')");
    auto after = probe.scalar("SELECT outbox_ms(clock_timestamp())");
    EXPECT_EQ(id.size(), 36u) << id;
    EXPECT_EQ(id.substr(14, 1), "7") << id << ": the version";
    EXPECT_NE(std::string{"89ab"}.find(id.substr(19, 1)), std::string::npos)
        << id << ": the variant";
    EXPECT_GE(millis_of(id), before) << id;
    EXPECT_LE(millis_of(id), after) << id;
    probe.exec("SET session_replication_role = replica");
    return id;
  }
};
INSTANTIATE_TEST_SUITE_P(, StorageMigrationOnPostgreSQL,
                         ::testing::Values(outbox::test::backend::postgres),
                         outbox::test::backend_name);

TEST_P(StorageMigrationOnPostgreSQL, IdsTheDatabaseMakesAreVersion7) {
  auto first = expect_made_id(*sql_);
  exec("SELECT pg_sleep(0.002)");
  auto second = expect_made_id(*sql_);
  EXPECT_LT(first, second) << "later ids sort later";
  EXPECT_EQ(scalar("SELECT count(DISTINCT id) FROM (SELECT outbox_uuid_v7()"
                   " AS id FROM generate_series(1, 10000)) AS ids"),
            10000);
  EXPECT_EQ(scalar("SELECT count(*) FROM (SELECT outbox_uuid_v7() AS id FROM"
                   " generate_series(1, 1000)) AS ids"
                   " WHERE substr(id::text, 15, 1) <> '7'"
                   "  OR substr(id::text, 20, 1) NOT IN ('8', '9', 'a', 'b')"),
            0);
  EXPECT_NE(text("SELECT column_default FROM information_schema.columns"
                 " WHERE table_name = 'outbox' AND column_name = 'event_id'")
                .find("outbox_uuid_v7()"),
            std::string::npos);
}

TEST_P(StorageMigrationOnPostgreSQL, Version5IsMigratedKeepingItsRows) {
  auto target = empty_database("version_5");
  auto probe = outbox::test::sql_probe::open(GetParam(), target);
  probe->exec(outbox::storage::postgres::sql_files::schema);
  probe->exec("SET session_replication_role = origin;"
              " SELECT outbox_append('old', 'T', '{}')");
  auto old_id = probe->text("SELECT event_id FROM outbox");
  EXPECT_EQ(old_id.substr(14, 1), "4") << "version 5 made random ids";
  ASSERT_EQ(outbox::storage::connect(target, open_mode::migrated)
                ->found_schema_version(),
            schema_version);
  EXPECT_EQ(probe->scalar("SELECT version FROM schema_version"),
            schema_version);
  EXPECT_EQ(probe->text("SELECT event_id FROM outbox WHERE aggregate_id ="
                        " 'old'"),
            old_id);
  expect_made_id(*probe);
}

} // namespace
