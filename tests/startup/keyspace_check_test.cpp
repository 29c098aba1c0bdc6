// Whose the pipeline's Redis keys are (startup/keyspace_check.hpp), on a
// private redis-server and a SQLite database, asserted on the verdicts.
// CliKeyspace runs the commands that tell them.

#include "broker/keyspace_owner.hpp"
#include "config/settings.hpp"
#include "startup/keyspace_check.hpp"
#include "support/temp_dir.hpp"

#include "tests/broker/redis_fixture.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace outbox::test {
namespace {

using startup::keyspace_use;
using startup::outcome;
using testing::HasSubstr;
using testing::StartsWith;

class StartupKeyspace : public redis_fixture {
protected:
  void SetUp() override {
    redis_fixture::SetUp();
    storage::db_options options;
    options.path = dir_.file("app.db");
    db_ = storage::connect(options, storage::open_mode::migrated);
    s_.redis = conn_->options();
    config::apply_key_prefix(s_);
  }

  std::optional<broker::keyspace_owner> stamp() {
    return broker::read_owner(conn(), config::owner_stamp_key(s_));
  }

  temp_dir dir_{"outbox-startup-keyspace"};
  std::unique_ptr<storage::database> db_;
  config::settings s_;
};

TEST_F(StartupKeyspace, AReadOfAnUnstampedKeyspaceGoesAndStampsNothing) {
  auto judged = startup::check_keyspace(*db_, s_, keyspace_use::read);
  EXPECT_EQ(judged.result, outcome::go);
  EXPECT_TRUE(judged.remarks.empty());
  EXPECT_FALSE(stamp().has_value());
}

TEST_F(StartupKeyspace, AWriteStampsThisDatabaseWhichThenGoesOnBoth) {
  auto judged = startup::check_keyspace(*db_, s_, keyspace_use::write);
  EXPECT_EQ(judged.result, outcome::go);
  ASSERT_TRUE(stamp().has_value());
  EXPECT_EQ(stamp()->id, db_->identity().id);
  EXPECT_EQ(startup::check_keyspace(*db_, s_).result, outcome::go);
  EXPECT_EQ(startup::check_keyspace(*db_, s_, keyspace_use::write).result,
            outcome::go);
}

TEST_F(StartupKeyspace, AnotherDatabasesKeyspaceIsRefusedNamingIt) {
  broker::stamp_owner(conn(), config::owner_stamp_key(s_),
                      {"00112233445566778899aabbccddeeff", "/srv/other.db"});
  for (auto use : {keyspace_use::read, keyspace_use::write}) {
    auto judged = startup::check_keyspace(*db_, s_, use);
    EXPECT_EQ(judged.result, outcome::refused_usage);
    EXPECT_THAT(judged.refusal,
                StartsWith("this Redis keyspace belongs to another database "
                           "(id 00112233445566778899aabbccddeeff, path "
                           "/srv/other.db), not to "));
    EXPECT_THAT(judged.refusal, HasSubstr("(broker.key_prefix \"pipeline:\", "
                                          "stamp pipeline:outbox.owner)"));
  }
  EXPECT_EQ(stamp()->id, "00112233445566778899aabbccddeeff");
}

TEST_F(StartupKeyspace, TheLabIsRefusedOnlyWhereAPipelineOwnsTheSeedsNames) {
  EXPECT_EQ(startup::check_lab_keyspace(s_).result, outcome::go);
  // A prefixed pipeline's stamp is not the seed's names.
  broker::stamp_owner(conn(), config::owner_stamp_key(s_), {"a", "/a.db"});
  EXPECT_EQ(startup::check_lab_keyspace(s_).result, outcome::go);
  broker::stamp_owner(conn(), "outbox.owner", {"b", "/b.db"});
  auto judged = startup::check_lab_keyspace(s_);
  EXPECT_EQ(judged.result, outcome::refused_usage);
  EXPECT_THAT(judged.refusal,
              StartsWith("the seed's key names in this Redis (outbox.events, "
                         "processed, ...) are the pipeline keyspace of a "
                         "database (id b, path /b.db; stamp outbox.owner, "));
}

} // namespace
} // namespace outbox::test
