#include "config/settings.hpp"

#include "tests/config/settings_checks.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

// Settings written out as JSON and read back, key by key.

namespace outbox::config {
namespace {

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

} // namespace
} // namespace outbox::config
