#pragma once

// What a run has done so far, read from the stores: the coordinator's
// progress and stall rules, the metrics endpoint and the run report all
// read this one snapshot (actors/ports.hpp: pipeline_port::snapshot).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace outbox::metrics {

/// The SENDING rows one relay (of any process) holds leases on.
struct lease_holding {
  std::string owner;
  std::int64_t rows = 0;
  /// The earliest lease_until among them, wall clock ms.
  std::int64_t earliest_expiry = 0;
};

/// How far a run has got, read from the stores (not from this process's
/// counters, so several processes sharing one database agree).
struct pipeline_snapshot {
  std::int64_t orders = 0;
  std::int64_t outbox_rows = 0;
  std::int64_t pending = 0;
  std::int64_t sending = 0;
  std::int64_t published = 0;
  std::int64_t failed = 0;
  /// Age of the oldest PENDING or SENDING row, in ms (0 when none).
  std::int64_t oldest_unpublished_age_ms = 0;
  std::int64_t queued = 0;
  std::int64_t in_processing = 0;
  /// False when entries moved back to a queue while Redis was read
  /// (broker_stats::settled): `queued` and `in_processing` may then miss
  /// one in flight, so they cannot say the consumers are done.
  bool queues_settled = true;
  std::int64_t processed = 0;
  std::int64_t duplicates = 0;
  std::int64_t dead_lettered = 0;
  /// Entries in the dead-letter list now (every process's), waiting for a
  /// replay or a drop decision.
  std::int64_t dead_letter_waiting = 0;
  std::int64_t order_violations = 0;
  /// SENDING rows by the relay that leases them, with the earliest
  /// lease_until (wall clock ms) of each: whom a stuck run waits for.
  std::vector<lease_holding> leases;
  /// storage::outbox_views::change_mark(): it moves when the database
  /// changed between two reads (on PostgreSQL late, from its statistics);
  /// none where the database keeps no mark (PostgreSQL with track_counts
  /// off), or when it did not answer.
  std::optional<std::int64_t> database_mark;
  /// Empty when both stores answered; else what went wrong.
  std::string trouble;
  /// Whether the database's and Redis's figures above were read; a store
  /// that did not answer leaves its figures at 0.
  bool database_answered = true;
  bool redis_answered = true;
  /// The trouble is an outage (Redis unreachable or loading, the database
  /// locked), which waiting can end; false for any other failure.
  bool outage = false;
};

/// Sets each of `fields`, members of pipeline_snapshot, in `to` to its
/// value in `from`: one store's figures kept from an earlier read.
template <class... Field>
void copy_snapshot_fields(const pipeline_snapshot& from, pipeline_snapshot& to,
                          Field pipeline_snapshot::*... fields) {
  ((to.*fields = from.*fields), ...);
}

/// Sets `to`'s figures read from the database (outbox counts, leases, the
/// change mark) to `from`'s.
inline void copy_database_figures(const pipeline_snapshot& from,
                                  pipeline_snapshot& to) {
  using s = pipeline_snapshot;
  copy_snapshot_fields(from, to, &s::orders, &s::outbox_rows, &s::pending,
                       &s::sending, &s::published, &s::failed,
                       &s::oldest_unpublished_age_ms, &s::database_mark,
                       &s::leases);
}

/// Sets `to`'s figures read from Redis (queues, processing lists, records,
/// counters) to `from`'s.
inline void copy_redis_figures(const pipeline_snapshot& from,
                               pipeline_snapshot& to) {
  using s = pipeline_snapshot;
  copy_snapshot_fields(from, to, &s::queued, &s::in_processing,
                       &s::queues_settled, &s::processed, &s::duplicates,
                       &s::dead_lettered, &s::dead_letter_waiting,
                       &s::order_violations);
}

} // namespace outbox::metrics
