#include "config/settings.hpp"

#include "support/temp_dir.hpp"
#include "tests/config/settings_checks.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <string>

// The defaults, the shipped file, and what a file or the key prefix
// overrides.

namespace outbox::config {
namespace {

using test::temp_dir;

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

TEST(ConfigOverrides, AllowEvictingTakesABoolean) {
  EXPECT_TRUE(apply_json(R"({"redis": {"allow_evicting": true}})", "test")
                  .allow_evicting_redis);
  EXPECT_FALSE(apply_json(R"({"redis": {"allow_evicting": false}})", "test")
                   .allow_evicting_redis);
}

} // namespace
} // namespace outbox::config
