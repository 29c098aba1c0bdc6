#include "storage/database_identity.hpp"

#include "storage/sqlite/database.hpp"
#include "storage/store_error.hpp"
#include "support/temp_dir.hpp"

#include <SQLiteCpp/Database.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>

using namespace outbox::storage;
using namespace outbox::storage::sqlite;
using outbox::test::temp_dir;

namespace {

db_options options_in(const temp_dir& dir) {
  db_options options;
  options.path = dir.file("outbox.db");
  return options;
}

TEST(StorageDatabaseIdentity, ACreatedDatabaseGetsARandomIdOnce) {
  temp_dir dir;
  auto options = options_in(dir);
  auto first = read_identity(*open_and_migrate(options));
  EXPECT_EQ(first.id.size(), 32u);
  EXPECT_TRUE(std::all_of(first.id.begin(), first.id.end(), [](char c) {
    return std::isxdigit(static_cast<unsigned char>(c)) && !std::isupper(c);
  })) << first.id;
  EXPECT_EQ(first.first_schema, 0);
  EXPECT_FALSE(first.upgraded());
  EXPECT_EQ(first.path, options.path);
  // Migrating again keeps it; another database has another.
  EXPECT_EQ(read_identity(*open_and_migrate(options)).id, first.id);
  temp_dir other;
  EXPECT_NE(read_identity(*open_and_migrate(options_in(other))).id, first.id);
}

TEST(StorageDatabaseIdentity, AnUpgradedDatabaseRemembersItsVersion) {
  temp_dir dir;
  auto options = options_in(dir);
  open_and_migrate(options)->exec(
      "DROP TABLE database_identity; PRAGMA user_version = 4");
  auto identity = read_identity(*open_and_migrate(options));
  EXPECT_EQ(identity.id.size(), 32u);
  EXPECT_EQ(identity.first_schema, 4);
  EXPECT_TRUE(identity.upgraded());
}

TEST(StorageDatabaseIdentity, ADatabaseBeforeSchema5HasNone) {
  temp_dir dir;
  auto options = options_in(dir);
  auto db = open_and_migrate(options);
  db->exec("DROP TABLE database_identity");
  EXPECT_THROW(read_identity(*db), store_error);
}

} // namespace
