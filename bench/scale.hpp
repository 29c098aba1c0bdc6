#pragma once

#include <cstdint>

namespace outbox::bench {

/// How much work each stage does: enough to be steady, bounded in time.
struct bench_scale {
  std::int64_t orders_one_per_txn = 2'000;
  std::int64_t orders_grouped = 200'000;
  std::int64_t relay_events = 200'000;
  std::int64_t consumer_entries = 200'000;
  std::int64_t end_to_end_orders = 200'000;
  int fixed_load_seconds = 10;
  std::int64_t history_small = 10'000;
  std::int64_t history_large = 1'000'000;
  std::int64_t spread_pending = 100'000;
  int timed_claims = 50;
  /// Dedup records of delivered events the trim stage forgets.
  std::int64_t trim_records = 50'000;
  /// How long a stage may wait for its actors before it is declared stuck
  /// (the soak: for its process to move on).
  int stage_timeout_s = 300;
  /// Events of the soak (`outbox bench --soak`); 0 in the other runs.
  std::int64_t soak_events = 0;
  /// How often the soak reads its process's memory.
  int soak_sample_ms = 250;

  static bench_scale full() { return {}; }
  static bench_scale quick();
  /// Every stage in seconds, figures meaningless: for the tests.
  static bench_scale tiny();
};

} // namespace outbox::bench
