#include "config/settings.hpp"

#include "support/build_paths.hpp"
#include "support/temp_dir.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <string>
#include <vector>

using outbox::config::apply_json;
using outbox::config::config_error;
using outbox::config::load_file;
using outbox::config::settings;
using outbox::config::to_json;
using outbox::config::validate;
using outbox::test::temp_dir;

namespace {

/// The config_error `f` throws. When it throws none, the test fails and the
/// error returned names no key.
template <class F>
config_error error_from(F f) {
  try {
    f();
  } catch (const config_error& e) {
    return e;
  }
  ADD_FAILURE() << "no config_error";
  return config_error{"", "(no error)"};
}

/// Field-by-field equality, so a key missing from to_json cannot hide.
void expect_same(const settings& a, const settings& b) {
  EXPECT_EQ(a.key_prefix, b.key_prefix);
  EXPECT_EQ(a.db.path, b.db.path);
  EXPECT_EQ(a.db.busy_timeout_ms, b.db.busy_timeout_ms);
  EXPECT_EQ(a.db.synchronous, b.db.synchronous);
  EXPECT_EQ(a.db.relay_synchronous, b.db.relay_synchronous);
  EXPECT_EQ(a.redis.where.host, b.redis.where.host);
  EXPECT_EQ(a.redis.where.port, b.redis.where.port);
  EXPECT_EQ(a.redis.username, b.redis.username);
  EXPECT_EQ(a.redis.password, b.redis.password);
  EXPECT_EQ(a.redis_password_file, b.redis_password_file);
  EXPECT_EQ(a.redis_sentinels, b.redis_sentinels);
  EXPECT_EQ(a.redis.min_replica_acks, b.redis.min_replica_acks);
  EXPECT_EQ(a.redis.replica_ack_timeout_ms, b.redis.replica_ack_timeout_ms);
  EXPECT_EQ(a.redis_master_name, b.redis_master_name);
  EXPECT_EQ(a.redis_sentinel_username, b.redis_sentinel_username);
  EXPECT_EQ(a.redis_sentinel_password, b.redis_sentinel_password);
  EXPECT_EQ(a.redis_sentinel_password_file, b.redis_sentinel_password_file);
  EXPECT_EQ(a.redis.db, b.redis.db);
  EXPECT_EQ(a.redis.connect_timeout_ms, b.redis.connect_timeout_ms);
  EXPECT_EQ(a.redis.io_timeout_ms, b.redis.io_timeout_ms);
  EXPECT_EQ(a.allow_evicting_redis, b.allow_evicting_redis);
  EXPECT_EQ(a.broker.queue, b.broker.queue);
  EXPECT_EQ(a.broker.partitions, b.broker.partitions);
  EXPECT_EQ(a.broker.processed, b.broker.processed);
  EXPECT_EQ(a.broker.reserved, b.broker.reserved);
  EXPECT_EQ(a.broker.aggregate_seq, b.broker.aggregate_seq);
  EXPECT_EQ(a.broker.counters, b.broker.counters);
  EXPECT_EQ(a.broker.dead_letter, b.broker.dead_letter);
  EXPECT_EQ(a.broker.processing_prefix, b.broker.processing_prefix);
  EXPECT_EQ(a.broker.max_entry_bytes, b.broker.max_entry_bytes);
  EXPECT_EQ(a.broker.max_consume_bytes, b.broker.max_consume_bytes);
  EXPECT_EQ(a.lease.ttl, b.lease.ttl);
  EXPECT_EQ(a.lease.batch, b.lease.batch);
  EXPECT_EQ(a.lease.max_attempts, b.lease.max_attempts);
  EXPECT_EQ(a.lease.backoff_base, b.lease.backoff_base);
  EXPECT_EQ(a.lease.backoff_max, b.lease.backoff_max);
  EXPECT_EQ(a.run.relays, b.run.relays);
  EXPECT_EQ(a.run.consumers, b.run.consumers);
  EXPECT_EQ(a.run.orders, b.run.orders);
  EXPECT_DOUBLE_EQ(a.run.followup_share, b.run.followup_share);
  EXPECT_EQ(a.run.commit_batch, b.run.commit_batch);
  EXPECT_EQ(a.run.commit_delay_ms, b.run.commit_delay_ms);
  EXPECT_EQ(a.run.max_in_flight, b.run.max_in_flight);
  EXPECT_EQ(a.run.orders_per_second, b.run.orders_per_second);
  EXPECT_EQ(a.run.poll_interval_ms, b.run.poll_interval_ms);
  EXPECT_EQ(a.run.idle_poll_max_ms, b.run.idle_poll_max_ms);
  EXPECT_EQ(a.run.consumer_block_ms, b.run.consumer_block_ms);
  EXPECT_EQ(a.run.restart_budget, b.run.restart_budget);
  EXPECT_EQ(a.crash.seed, b.crash.seed);
  EXPECT_DOUBLE_EQ(a.crash.relay_after_claim, b.crash.relay_after_claim);
  EXPECT_DOUBLE_EQ(a.crash.relay_after_publish, b.crash.relay_after_publish);
  EXPECT_DOUBLE_EQ(a.crash.relay_pause, b.crash.relay_pause);
  EXPECT_DOUBLE_EQ(a.crash.consumer_after_pop, b.crash.consumer_after_pop);
  EXPECT_DOUBLE_EQ(a.crash.consumer_after_effect,
                   b.crash.consumer_after_effect);
  EXPECT_EQ(a.crash.recovery_pause_ms, b.crash.recovery_pause_ms);
  EXPECT_EQ(a.consumer.unknown_types, b.consumer.unknown_types);
  EXPECT_EQ(a.consumer.effects_lua, b.consumer.effects_lua);
  EXPECT_EQ(a.log.level, b.log.level);
  EXPECT_EQ(a.log.format, b.log.format);
  EXPECT_EQ(a.log.summary_interval_ms, b.log.summary_interval_ms);
  EXPECT_EQ(a.metrics_listen, b.metrics_listen);
}

/// The config file the project ships (read at run time: see build_paths).
std::string shipped_file() {
  return outbox::test::source_dir() + "/config/outbox.json";
}

} // namespace

TEST(ConfigDefaults, MatchTheDocumentedValues) {
  settings s;
  EXPECT_EQ(s.db.path, "var/outbox.db");
  EXPECT_EQ(s.db.synchronous, "FULL");
  EXPECT_EQ(s.db.relay_synchronous, "NORMAL");
  EXPECT_EQ(s.redis.where.host, "127.0.0.1");
  EXPECT_EQ(s.redis.where.port, 6379);
  EXPECT_EQ(s.redis.io_timeout_ms, 4000);
  EXPECT_FALSE(s.allow_evicting_redis);
  EXPECT_EQ(s.broker.queue, "outbox.events");
  EXPECT_EQ(s.broker.processed, "processed");
  EXPECT_EQ(s.key_prefix, "pipeline:");
  EXPECT_EQ(s.broker.max_entry_bytes, 1u << 20);
  // Room above the publishing limit: raising it within this loses nothing.
  EXPECT_EQ(s.broker.max_consume_bytes, 16u << 20);
  EXPECT_GT(s.broker.max_consume_bytes, s.broker.max_entry_bytes);
  EXPECT_EQ(s.lease.ttl, 10000);
  EXPECT_EQ(s.lease.batch, 256);
  EXPECT_EQ(s.run.relays, 2);
  EXPECT_EQ(s.run.poll_interval_ms, 50);
  EXPECT_EQ(s.crash.seed, 1u);
  EXPECT_EQ(s.crash.relay_after_claim, 0.0);
}

TEST(ConfigDefaults, AreValid) {
  EXPECT_NO_THROW(validate(settings{}));
}

TEST(ConfigDefaults, EmptyObjectKeepsDefaults) {
  expect_same(apply_json("{}", "test"), settings{});
  expect_same(apply_json(R"({"db": {}, "run": {}})", "test"), settings{});
}

TEST(ConfigShippedFile, EqualsDefaults) {
  auto loaded = load_file(shipped_file());
  expect_same(loaded, settings{});
  EXPECT_NO_THROW(validate(loaded));
}

TEST(ConfigShippedFile, ListsEveryKeyInTheOutputShape) {
  // The default file documents every key: it must parse to exactly what
  // to_json writes for the defaults (no key missing, none extra).
  std::ifstream in(shipped_file());
  ASSERT_TRUE(in) << shipped_file();
  auto file = nlohmann::json::parse(in);
  EXPECT_EQ(file, nlohmann::json::parse(to_json(settings{})));
}

TEST(ConfigOverrides, FileChangesOnlyItsKeys) {
  temp_dir dir{"outbox-config"};
  auto path = dir.write("partial.json", R"({
    "db": {"busy_timeout_ms": 1000},
    "redis": {"host": "redis.local", "port": 7000, "io_timeout_ms": 1000},
    "lease": {"ttl_ms": 2500},
    "run": {"relays": 0, "followup_share": 0.25},
    "crash": {"relay_after_publish": 0.125}
  })");
  auto s = load_file(path);
  settings expected;
  expected.redis.where.host = "redis.local";
  expected.redis.where.port = 7000;
  expected.db.busy_timeout_ms = 1000;
  expected.redis.io_timeout_ms = 1000;
  expected.lease.ttl = 2500;
  expected.run.relays = 0;
  expected.run.followup_share = 0.25;
  expected.crash.relay_after_publish = 0.125;
  expect_same(s, expected);
  EXPECT_NO_THROW(validate(s));
}

TEST(ConfigOverrides, AppliesOverTheGivenBase) {
  settings base;
  base.lease.batch = 17;
  base.db.path = "/tmp/base.db";
  auto s = apply_json(R"({"lease": {"max_attempts": 3}})", "test", base);
  EXPECT_EQ(s.lease.batch, 17);
  EXPECT_EQ(s.db.path, "/tmp/base.db");
  EXPECT_EQ(s.lease.max_attempts, 3);
}

TEST(ConfigOverrides, SynchronousIsCaseInsensitiveAndStoredUpperCase) {
  auto s = apply_json(R"({"db": {"synchronous": "normal"}})", "test");
  EXPECT_EQ(s.db.synchronous, "NORMAL");
  s = apply_json(R"({"db": {"synchronous": "Off"}})", "test");
  EXPECT_EQ(s.db.synchronous, "OFF");
}

TEST(ConfigOverrides, ProbabilitiesAcceptIntegers) {
  auto s = apply_json(R"({"crash": {"relay_pause": 1}, "run":
                         {"followup_share": 0}})",
                      "test");
  EXPECT_EQ(s.crash.relay_pause, 1.0);
  EXPECT_EQ(s.run.followup_share, 0.0);
}

TEST(ConfigOverrides, LargeValuesKeepTheirType) {
  auto s = apply_json(
      R"({"crash": {"seed": 9223372036854775807}, "run": {"orders": 5000000000}})",
      "test");
  EXPECT_EQ(s.crash.seed, 9223372036854775807ull);
  EXPECT_EQ(s.run.orders, 5000000000);
}

TEST(ConfigRoundTrip, NonDefaultSettingsSurviveToJsonAndBack) {
  settings s;
  s.db.path = "/data/o.db";
  s.db.busy_timeout_ms = 0;
  s.db.synchronous = "NORMAL";
  s.db.relay_synchronous = "FULL";
  s.redis.where.host = "::1";
  s.redis.where.port = 6380;
  s.redis.connect_timeout_ms = 10;
  s.redis.io_timeout_ms = 900;
  s.allow_evicting_redis = true;
  s.key_prefix = "";
  s.broker.queue = "q";
  s.broker.partitions = 8;
  s.broker.processed = "p";
  s.broker.aggregate_seq = "a";
  s.broker.counters = "c";
  s.broker.dead_letter = "d";
  s.broker.processing_prefix = "proc:";
  s.broker.max_entry_bytes = 4096;
  s.broker.max_consume_bytes = 8192;
  s.lease.ttl = 1234;
  s.lease.batch = 10000;
  s.lease.max_attempts = 1;
  s.lease.backoff_base = 7;
  s.lease.backoff_max = 7;
  s.run.relays = 5;
  s.run.consumers = 0;
  s.run.orders = 123456789012;
  s.run.followup_share = 0.1;
  s.run.commit_batch = 1;
  s.run.commit_delay_ms = 3;
  s.run.max_in_flight = 7;
  s.run.orders_per_second = 250;
  s.run.poll_interval_ms = 11;
  s.run.idle_poll_max_ms = 11;
  s.run.consumer_block_ms = 99;
  s.run.restart_budget = 0;
  s.consumer.unknown_types = "dead-letter";
  s.consumer.effects_lua = "effects/invoices.lua";
  s.crash.seed = 42;
  s.crash.relay_after_claim = 0.01;
  s.crash.relay_after_publish = 1.0 / 3.0;
  s.crash.relay_pause = 1;
  s.crash.consumer_after_pop = 0.5;
  s.crash.consumer_after_effect = 0.999;
  s.crash.recovery_pause_ms = 2500;
  s.log.level = "debug";
  s.log.format = "json";
  s.log.summary_interval_ms = 5000;
  s.metrics_listen = "0.0.0.0:9464";
  ASSERT_NO_THROW(validate(s));

  auto text = to_json(s);
  auto back = apply_json(text, "round trip");
  expect_same(back, s);
  EXPECT_EQ(to_json(back), text);
}

TEST(ConfigKeyPrefix, GoesBeforeEveryPipelineNameOnce) {
  settings s;
  apply_key_prefix(s);
  apply_key_prefix(s);
  EXPECT_EQ(s.broker.queue, "pipeline:outbox.events");
  EXPECT_EQ(s.broker.partition(3), "pipeline:outbox.events.3");
  EXPECT_EQ(s.broker.processed, "pipeline:processed");
  EXPECT_EQ(s.broker.reserved, "pipeline:effects:inventory.reserved");
  EXPECT_EQ(s.broker.aggregate_seq, "pipeline:outbox.aggregate_seq");
  EXPECT_EQ(s.broker.counters, "pipeline:outbox.counters");
  EXPECT_EQ(s.broker.dead_letter, "pipeline:outbox.dead_letter");
  EXPECT_EQ(s.broker.dead_letter_dropped(),
            "pipeline:outbox.dead_letter.dropped");
  EXPECT_EQ(s.broker.processing_prefix, "pipeline:outbox.processing.");
  EXPECT_EQ(owner_stamp_key(s), "pipeline:outbox.owner");
  // The names before the prefix existed: the lab's, seed 000's.
  auto plain = unprefixed_keys(s);
  EXPECT_EQ(plain.queue, outbox::broker::keys{}.queue);
  EXPECT_EQ(plain.partitions_record(), "outbox.events.partitions");
  EXPECT_EQ(plain.processing_prefix, outbox::broker::keys{}.processing_prefix);
}

TEST(ConfigKeyPrefix, MayBeEmptyButNotBenchs) {
  auto plain = apply_json(R"({"broker": {"key_prefix": ""}})", "test");
  EXPECT_NO_THROW(validate(plain));
  apply_key_prefix(plain);
  EXPECT_EQ(plain.broker.queue, "outbox.events");
  EXPECT_EQ(owner_stamp_key(plain), "outbox.owner");
  auto bench = apply_json(R"({"broker": {"key_prefix": "bench."}})", "test");
  EXPECT_THROW(validate(bench), config_error);
}

TEST(ConfigRoundTrip, OutputHasTheSectionsInFileOrder) {
  auto doc = nlohmann::ordered_json::parse(to_json(settings{}));
  std::vector<std::string> names;
  for (const auto& [name, section] : doc.items()) {
    names.push_back(name);
    EXPECT_TRUE(section.is_object()) << name;
  }
  EXPECT_EQ(names,
            (std::vector<std::string>{"db", "redis", "broker", "lease", "run",
                                      "consumer", "crash", "log", "metrics"}));
  EXPECT_EQ(doc["lease"]["ttl_ms"], 10000);
}

TEST(ConfigValidate, ChecksValuesSetInCode) {
  // Flags change settings after the file: validate sees them.
  settings s;
  s.redis.where.port = 0;
  auto e = error_from([&] { validate(s); });
  EXPECT_EQ(e.key(), "redis.port");
  s = settings{};
  s.db.synchronous = "normal"; // not normalised: only the loader does that
  EXPECT_THROW(validate(s), config_error);
}

TEST(ConfigValidate, ConsumeLimitAtLeastThePublishingLimit) {
  settings s;
  s.broker.max_entry_bytes = 4u << 20;
  s.broker.max_consume_bytes = 4u << 20;
  EXPECT_NO_THROW(validate(s)) << "equal is enough";
  s.broker.max_consume_bytes = (4u << 20) - 1;
  auto e = error_from([&] { validate(s); });
  EXPECT_EQ(e.key(), "broker.max_consume_bytes");
  EXPECT_NE(std::string{e.what()}.find(
                "must be at least broker.max_entry_bytes (4194304), got "
                "4194303"),
            std::string::npos)
      << e.what();
}

TEST(ConfigValidate, TtlNeedNotExceedTheIdlePollCap) {
  // Only the poll interval bounds the ttl (see validate.cpp): an idle relay
  // holds no lease.
  auto s = apply_json(R"({"db": {"busy_timeout_ms": 100},
                         "redis": {"io_timeout_ms": 300},
                         "lease": {"ttl_ms": 500},
                         "run": {"poll_interval_ms": 100,
                                 "idle_poll_max_ms": 2000}})",
                      "test");
  EXPECT_NO_THROW(validate(s));
}

TEST(ConfigValidate, TtlJustAboveBothStoreTimeoutsAndThreeRenewals) {
  // 300 = three renewals of the consumers' lock; 299 = 49 + 250.
  auto s = apply_json(R"({"db": {"busy_timeout_ms": 49},
                         "redis": {"io_timeout_ms": 250},
                         "lease": {"ttl_ms": 300},
                         "run": {"poll_interval_ms": 10}})",
                      "test");
  EXPECT_NO_THROW(validate(s));
  s.db.busy_timeout_ms = 50; // 300 = 50 + 250: not more
  EXPECT_THROW(validate(s), config_error);
  s.lease.ttl = 301;
  EXPECT_NO_THROW(validate(s));
}

TEST(ConfigValidate, TheLockTtlRuleNamesEveryKeyAndValue) {
  settings s;
  s.lease.ttl = 100;
  s.run.poll_interval_ms = 10;
  auto renewals = error_from([&] { validate(s); });
  EXPECT_EQ(renewals.key(), "lease.ttl_ms");
  EXPECT_STREQ(renewals.what(),
               "lease.ttl_ms: must be at least 300 (three "
               "renewals of the consumers' lock, every 100 ms), "
               "got 100");
  s.lease.ttl = 2000;
  s.db.busy_timeout_ms = 1500;
  s.redis.io_timeout_ms = 600;
  std::string what = error_from([&] { validate(s); }).what();
  EXPECT_EQ(what.rfind("lease.ttl_ms: must be greater than "
                       "db.busy_timeout_ms (1500) + redis.io_timeout_ms "
                       "(600) = 2100, got 2000",
                       0),
            0u)
      << what;
}

TEST(ConfigOverrides, AllowEvictingTakesABoolean) {
  EXPECT_TRUE(apply_json(R"({"redis": {"allow_evicting": true}})", "test")
                  .allow_evicting_redis);
  EXPECT_FALSE(apply_json(R"({"redis": {"allow_evicting": false}})", "test")
                   .allow_evicting_redis);
}

TEST(ConfigErrors, NameTheOriginFile) {
  auto e = error_from(
      [&] { apply_json(R"({"lease": {"batch": "x"}})", "my/config.json"); });
  EXPECT_EQ(e.key(), "lease.batch");
  EXPECT_STREQ(e.what(), "lease.batch: expected an integer, got string, in "
                         "my/config.json");
}

TEST(ConfigErrors, SuggestTheClosestKey) {
  auto e =
      error_from([&] { apply_json(R"({"lease": {"ttl": 5000}})", "test"); });
  EXPECT_EQ(e.key(), "lease.ttl");
  EXPECT_NE(std::string(e.what()).find(
                "lease.ttl: unknown key (did you mean lease.ttl_ms?)"),
            std::string::npos)
      << e.what();
}

TEST(ConfigErrors, TheRetiredReservationKeySaysWhereTheHashWent) {
  auto e = error_from([&] {
    apply_json(R"({"broker": {"reserved": "inventory.reserved"}})", "test");
  });
  EXPECT_EQ(e.key(), "broker.reserved");
  EXPECT_NE(std::string(e.what()).find("effects:inventory.reserved"),
            std::string::npos)
      << e.what();
}

TEST(ConfigErrors, APipelineKeyUnderTheEffectsPrefixIsRefused) {
  // Effects may write any key under "<prefix>effects:".
  auto e = error_from([&] {
    auto s =
        apply_json(R"({"broker": {"counters": "effects:counters"}})", "test");
    outbox::config::validate(s);
  });
  EXPECT_EQ(e.key(), "broker.counters");
}
