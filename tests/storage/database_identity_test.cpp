#include "storage/database_identity.hpp"

#include "storage/sqlite/database.hpp"
#include "storage/store_error.hpp"
#include "support/temp_dir.hpp"
#include "tests/storage/contract_fixture.hpp"

#include <SQLiteCpp/Database.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>

using namespace outbox::storage;
using outbox::test::temp_dir;

namespace {

class StorageDatabaseIdentity : public outbox::test::contract_fixture {};
OUTBOX_ON_BOTH_BACKENDS(StorageDatabaseIdentity);

TEST_P(StorageDatabaseIdentity, ACreatedDatabaseGetsARandomIdOnce) {
  auto first = db_->identity();
  EXPECT_EQ(first.id.size(), 32u);
  EXPECT_TRUE(std::all_of(first.id.begin(), first.id.end(), [](char c) {
    return std::isxdigit(static_cast<unsigned char>(c)) && !std::isupper(c);
  })) << first.id;
  EXPECT_EQ(first.first_schema, 0);
  EXPECT_FALSE(first.upgraded());
  // The file; on PostgreSQL the role, server and database (never the URI's
  // password or passfile).
  EXPECT_EQ(first.path, postgres()
                            ? "PostgreSQL outbox@127.0.0.1:" +
                                  std::to_string(backend_.server().port()) +
                                  "/outbox"
                            : options().path);
  // Migrating again keeps it; another database has another.
  EXPECT_EQ(connect(open_mode::migrated)->identity().id, first.id);
  auto other = empty_database("other");
  EXPECT_NE(outbox::storage::connect(other, open_mode::migrated)->identity().id,
            first.id);
}

TEST_P(StorageDatabaseIdentity, ADatabaseBeforeSchema5HasNone) {
  exec("DROP TABLE database_identity");
  EXPECT_THROW(db_->identity(), store_error);
}

// SQLite only: PostgreSQL's schema starts at its version 1, which has the
// identity; there is no earlier version to upgrade from.
TEST(StorageDatabaseIdentityOnSQLite, AnUpgradedDatabaseRemembersItsVersion) {
  temp_dir dir;
  db_options options;
  options.path = dir.file("outbox.db");
  sqlite::open_and_migrate(options)->exec(
      "DROP TABLE database_identity; PRAGMA user_version = 4");
  auto identity = sqlite::read_identity(*sqlite::open_and_migrate(options));
  EXPECT_EQ(identity.id.size(), 32u);
  EXPECT_EQ(identity.first_schema, 4);
  EXPECT_TRUE(identity.upgraded());
}

} // namespace
