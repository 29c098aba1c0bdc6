#include "tests/config/settings_checks.hpp"

#include "support/build_paths.hpp"

namespace outbox::config {

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

std::string shipped_file() {
  return test::source_dir() + "/config/outbox.json";
}

} // namespace outbox::config
