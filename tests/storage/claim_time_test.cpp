#include "storage/database.hpp"
#include "storage/postgres/sql_files.hpp"
#include "tests/storage/outbox_store_fixture.hpp"

// A claim stores when it was made (claimed_at, schema version 10), on the
// clock its lease_until is counted from: `outbox status` reads a lease's
// claim time there, where it used to infer it from lease_until and the
// current lease.ttl_ms, wrong once the ttl changed between the claim and
// the status. And the upgrade of a version 9 database, with leases of its
// own, on both backends.

using namespace outbox::storage;
using StorageClaimTime = outbox::test::outbox_store_fixture;

OUTBOX_ON_BOTH_BACKENDS(StorageClaimTime);

TEST_P(StorageClaimTime, AClaimStoresItsTimeWhateverItsTtl) {
  auto event_id = append("a");
  policy_.ttl = 60'000;
  ASSERT_EQ(1u, outbox_.claim_batch("relay-1", 1'000, policy_).events.size());
  EXPECT_EQ("1000", column(event_id, "claimed_at"));
  auto stats = outbox_.stats(5'000);
  ASSERT_EQ(1u, stats.leases.size());
  EXPECT_EQ(61'000, stats.leases[0].latest_expiry);
  // lease_until minus another ttl (10 s here) would say 51'000.
  EXPECT_EQ(std::optional<millis>{1'000}, stats.leases[0].last_claim);
}

TEST_P(StorageClaimTime, AnOwnersLastClaimIsItsNewestNotARenewal) {
  policy_.ttl = 60'000;
  auto first = append("a");
  ASSERT_EQ(1u, outbox_.claim_batch("relay-1", 1'000, policy_).events.size());
  append("b");
  auto second = outbox_.claim_batch("relay-1", 2'000, policy_);
  ASSERT_EQ(1u, second.events.size());
  EXPECT_EQ(1, outbox_.renew("relay-1", second.leases(), 90'000));
  auto stats = outbox_.stats(3'000);
  ASSERT_EQ(1u, stats.leases.size());
  EXPECT_EQ(2, stats.leases[0].rows);
  EXPECT_EQ(std::optional<millis>{2'000}, stats.leases[0].last_claim)
      << "a renewal extends the lease, it claims nothing";
  EXPECT_EQ("1000", column(first, "claimed_at"));
}

TEST_P(StorageClaimTime, ATakeoverStampsItsOwnClaim) {
  policy_.ttl = 10;
  auto event_id = append("a");
  ASSERT_EQ(1u, outbox_.claim_batch("relay-1", 0, policy_).events.size());
  ASSERT_EQ(1u, outbox_.claim_batch("relay-2", 500, policy_).events.size());
  EXPECT_EQ("500", column(event_id, "claimed_at"));
  auto stats = outbox_.stats(600);
  ASSERT_EQ(1u, stats.leases.size());
  EXPECT_EQ("relay-2", stats.leases[0].owner);
  EXPECT_EQ(std::optional<millis>{500}, stats.leases[0].last_claim);
}

namespace {

/// A database beside the fixture's as schema version 9 left it: the
/// outbox without claimed_at, one row leased by a relay of that version
/// (until 70'000).
void make_version_9(outbox::test::backend kind,
                    const outbox::storage::db_options& target) {
  if (kind == outbox::test::backend::postgres) {
    auto probe = outbox::test::sql_probe::open(kind, target);
    namespace files = outbox::storage::postgres::sql_files;
    for (const auto* file : {files::schema, files::schema_v6, files::schema_v7,
                             files::schema_v8, files::schema_v9})
      probe->exec(file);
    probe->exec("SET session_replication_role = origin;"
                " SELECT outbox_append('a', 'T', '{}')");
    // The relay role as grants.sql of version 9 made it.
    probe->exec("DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE"
                " rolname = 'outbox_relay') THEN CREATE ROLE outbox_relay;"
                " END IF; END $$;"
                "GRANT UPDATE (status, owner, lease_until, lease_epoch,"
                " attempts, available_at, last_error, published_at)"
                " ON outbox TO outbox_relay");
  } else {
    auto db = outbox::storage::connect(target, open_mode::migrated);
    db->orders()->append_event({"a", "T", "{}"}, 0);
    db.reset();
    auto probe = outbox::test::sql_probe::open(kind, target);
    probe->exec("ALTER TABLE outbox DROP COLUMN claimed_at;"
                " PRAGMA user_version = 9");
  }
  auto probe = outbox::test::sql_probe::open(kind, target);
  probe->exec("UPDATE outbox SET status = 'SENDING', owner = 'old-relay',"
              " lease_until = " +
              probe->at(70'000) + ", lease_epoch = 1, attempts = 1");
}

} // namespace

TEST_P(StorageClaimTime, Version9IsMigratedItsLeasesKeptWithoutAClaimTime) {
  auto target = empty_database("version_9");
  make_version_9(GetParam(), target);
  EXPECT_EQ(9, outbox::storage::connect(target, open_mode::as_is)
                   ->found_schema_version());

  auto db = outbox::storage::connect(target, open_mode::migrated);
  EXPECT_EQ(schema_version, db->found_schema_version());
  auto probe = outbox::test::sql_probe::open(GetParam(), target);
  EXPECT_EQ(1, probe->scalar("SELECT COUNT(*) FROM outbox"
                             " WHERE claimed_at IS NULL"));
  // The old relay's lease holds on, its claim time unknown: status shows
  // no age rather than one made up from the ttl.
  auto stats = db->views()->stats(10'000);
  ASSERT_EQ(1u, stats.leases.size());
  EXPECT_EQ("old-relay", stats.leases[0].owner);
  EXPECT_EQ(70'000, stats.leases[0].latest_expiry);
  EXPECT_FALSE(stats.leases[0].last_claim);

  // Past it, a relay of this version takes the row over and stamps it.
  auto taken = db->leases()->claim_batch("relay-1", 80'000, policy_);
  ASSERT_EQ(1u, taken.events.size());
  EXPECT_EQ(std::optional<millis>{80'000},
            db->views()->stats(80'001).leases.at(0).last_claim);
  if (postgres()) {
    EXPECT_EQ(1, probe->scalar("SELECT has_column_privilege('outbox_relay',"
                               " 'outbox', 'claimed_at', 'UPDATE')::int"))
        << "the relays of a database granted before keep claiming";
  }
}

TEST_P(StorageClaimTime, AVersion9DatabaseThatHasTheColumnIsMigratedAgain) {
  // Moved back to version 9 by hand after the upgrade: the column stays,
  // and migrating again neither fails nor loses it.
  if (postgres())
    exec("UPDATE schema_version SET version = 9");
  else
    exec("PRAGMA user_version = 9");
  auto db = connect(open_mode::migrated);
  EXPECT_EQ(schema_version, db->found_schema_version());
  auto event_id = append("a");
  ASSERT_EQ(1u,
            db->leases()->claim_batch("relay-1", 1'000, policy_).events.size());
  EXPECT_EQ("1000", column(event_id, "claimed_at"));
}
