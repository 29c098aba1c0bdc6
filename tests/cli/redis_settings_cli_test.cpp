#include "broker/connection.hpp"
#include "tests/cli/redis_guard_fixture.hpp"

#include "tests/cli/status_tables.hpp"

#include <filesystem>
#include <gmock/gmock.h>
#include <hiredis/hiredis.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

// Redis settings that lose data, through the binary: an evicting
// maxmemory-policy is refused (or run with the override), no persistence is
// warned about once, CONFIG renamed away is said once, and `outbox status`
// shows what it found.

namespace outbox::test {
namespace {

using CliRedisSettings = redis_guard_fixture;

const std::vector<std::string> lru = {"--maxmemory-policy", "allkeys-lru"};

TEST_F(CliRedisSettings, AnEvictingPolicyIsRefusedNamingTheSettingAndTheFix) {
  start_redis({false, lru});
  auto r = outbox_r(short_run());
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  for (const char* mention :
       {"maxmemory-policy is allkeys-lru", "queued events",
        "CONFIG SET maxmemory-policy noeviction", "--allow-evicting-redis",
        "redis.allow_evicting"})
    EXPECT_THAT(r.err, testing::HasSubstr(mention))
        << "stderr does not name '" << mention << "': " << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_FALSE(std::filesystem::exists(db_path())) << "refused before the "
                                                      "database was created";

  auto lab =
      run_outbox({"lab", "--dir", dir_.file("lab"), "--redis", redis_address()},
                 dir_.path().string(), 30'000);
  EXPECT_EQ(lab.exit_code, 1) << lab.out << lab.err;
  EXPECT_THAT(lab.err,
              testing::HasSubstr("outbox lab: refusing to start: Redis "
                                 "maxmemory-policy is allkeys-lru"));
}

TEST_F(CliRedisSettings, TheOverrideRunsWithOneWarning) {
  start_redis({false, lru});
  auto flag = outbox_r(short_run({"--allow-evicting-redis"}));
  EXPECT_EQ(flag.exit_code, 0) << flag.out << flag.err;
  EXPECT_EQ(occurrences(flag.err, "maxmemory-policy is allkeys-lru"), 1u)
      << flag.err;
  EXPECT_THAT(flag.err, testing::HasSubstr("starting anyway"));

  // The same switch as a config key.
  auto config =
      write_config("evicting.json", R"({"redis": {"allow_evicting": true}})");
  auto key = outbox_r(short_run({"--config", config}));
  EXPECT_EQ(key.exit_code, 0) << key.out << key.err;
  EXPECT_EQ(occurrences(key.err, "starting anyway"), 1u) << key.err;
}

TEST_F(CliRedisSettings, NoPersistenceIsWarnedAboutOnce) {
  start_redis(); // the test servers: appendonly no, save ""
  auto r = outbox_r(short_run());
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(occurrences(r.err, "Redis has no persistence"), 1u) << r.err;
  for (const char* mention : {"appendonly no", "every queued event",
                              "every dedup record", "CONFIG SET appendonly"})
    EXPECT_THAT(r.err, testing::HasSubstr(mention))
        << "stderr does not name '" << mention << "': " << r.err;
  EXPECT_THAT(r.err, testing::Not(testing::HasSubstr("refusing")));
}

TEST_F(CliRedisSettings, AofIsQuiet) {
  start_redis({true});
  auto r = outbox_r(short_run());
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.err, testing::Not(testing::HasSubstr("warning")));
}

TEST_F(CliRedisSettings, AReplicaWithoutReplicaAcksIsWarnedAbout) {
  start_redis({true});
  redis_server::options of_master;
  of_master.extra_args = {"--replicaof", redis_->endpoint().host,
                          std::to_string(redis_->endpoint().port)};
  redis_server replica{of_master};
  // The master lists the replica once it has connected.
  broker::connection master{redis_->connection_options()};
  bool listed = false;
  for (int i = 0; i < 200 && !listed; ++i) {
    auto role = master.command({"ROLE"});
    listed = role->elements > 2 && role->element[2]->elements > 0;
    if (!listed)
      std::this_thread::sleep_for(std::chrono::milliseconds{50});
  }
  ASSERT_TRUE(listed) << "the replica never connected";
  auto r = outbox_r(short_run());
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(occurrences(r.err, "Redis has 1 replica and "
                               "redis.min_replica_acks is 0"),
            1u)
      << r.err;
  // Asked for: every push waits for the replica, and the run is quiet.
  auto config =
      write_config("acks.json", R"({"redis": {"min_replica_acks": 1}})");
  auto acked = outbox_r(short_run({"--config", config}));
  EXPECT_EQ(acked.exit_code, 0) << acked.out << acked.err;
  EXPECT_THAT(acked.err, testing::Not(testing::HasSubstr("replica")));
  auto stats = master.command({"INFO", "commandstats"});
  EXPECT_THAT(broker::reply_text(*stats), testing::HasSubstr("cmdstat_wait:"));
}

TEST_F(CliRedisSettings, RenamedConfigIsSaidOnceAndTheRunGoesOn) {
  start_redis({false, {"--rename-command", "CONFIG", ""}});
  auto r = outbox_r(short_run());
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(occurrences(r.err, "cannot read Redis's settings"), 1u) << r.err;
  EXPECT_THAT(r.err, testing::HasSubstr("maxmemory-policy must be noeviction"));
  EXPECT_THAT(r.err, testing::Not(testing::HasSubstr("no persistence")))
      << "unknown is not judged: " << r.err;

  auto json = outbox_r({"status", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  auto settings = json_of(json).at("redis").at("settings");
  EXPECT_TRUE(settings.at("maxmemory_policy").is_null()) << settings;
  EXPECT_TRUE(settings.at("appendonly").is_null()) << settings;
  EXPECT_EQ(settings.at("role"), "master");
  EXPECT_NE(settings.at("config_error").get<std::string>().find("CONFIG"),
            std::string::npos);
  auto text = outbox_r({"status"});
  auto table = table_titled(text.out, "REDIS SETTING");
  auto row = row_of(table, "CONFIG");
  ASSERT_EQ(row.size(), 2u) << text.out;
  EXPECT_EQ(row[1].rfind("unavailable: ", 0), 0u) << row[1];
}

TEST_F(CliRedisSettings, StatusShowsTheSettings) {
  start_redis({true, lru});
  ASSERT_EQ(outbox_r({"init"}).exit_code, 0);
  auto json = outbox_r({"status", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  auto settings = json_of(json).at("redis").at("settings");
  EXPECT_EQ(settings.at("maxmemory_policy"), "allkeys-lru") << settings;
  EXPECT_EQ(settings.at("appendonly"), "yes");
  EXPECT_EQ(settings.at("appendfsync"), "always");
  EXPECT_EQ(settings.at("save"), "");
  EXPECT_EQ(settings.at("role"), "master");
  EXPECT_FALSE(settings.contains("config_error"));

  auto text = outbox_r({"status"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  auto table = table_titled(text.out, "REDIS SETTING");
  expect_aligned(table);
  EXPECT_EQ(row_of(table, "maxmemory-policy"),
            (std::vector<std::string>{"maxmemory-policy", "allkeys-lru"}))
      << text.out;
  EXPECT_EQ(row_of(table, "appendonly").at(1), "yes");
  EXPECT_EQ(row_of(table, "appendfsync").at(1), "always");
  EXPECT_EQ(row_of(table, "save").at(1), "none");
  EXPECT_EQ(row_of(table, "role").at(1), "master");
}

} // namespace
} // namespace outbox::test
