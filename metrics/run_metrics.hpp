#pragma once

#include "metrics/refusal_log.hpp"

#include <atomic>
#include <cstdint>
#include <mutex>
#include <random>
#include <vector>

namespace outbox::metrics {

/// Percentiles of a set of latency samples, in milliseconds, and the exact
/// histogram of all of them.
struct latency_summary {
  std::int64_t samples = 0;
  double p50 = 0;
  double p95 = 0;
  double p99 = 0;
  /// Sum of every sample (not only the reservoir's).
  double sum = 0;
  /// Samples <= latency_bucket_bounds()[i], cumulative, one per bound.
  std::vector<std::int64_t> cumulative;
};

/// Upper bounds (ms) of the latency histogram's buckets, 1 ms to 10 s; the
/// last bucket (+Inf) is `samples`.
const std::vector<double>& latency_bucket_bounds();

/// Collects latency samples from several threads. Keeps a uniform reservoir
/// of at most `capacity` samples for percentiles, so memory stays bounded on
/// long runs, plus exact counts per histogram bucket and the sum.
class latency_recorder {
public:
  explicit latency_recorder(std::size_t capacity = 200'000);

  void record(double millis);
  /// Records several samples under one lock (a relay acks 256 at a time).
  void record_many(const std::vector<double>& millis);
  latency_summary summary() const;

private:
  void add(double millis);

  mutable std::mutex mutex_;
  std::vector<double> samples_;
  /// Per bucket (not cumulative), one per latency_bucket_bounds().
  std::vector<std::int64_t> buckets_;
  double sum_ = 0;
  std::size_t capacity_;
  std::int64_t seen_ = 0;
  std::mt19937_64 random_{42};
};

using counter = std::atomic<std::int64_t>;

/// Counts itself in a gauge for as long as it lives (moved, it counts
/// once): whatever way its owner ends, the gauge comes back down.
class gauge_hold {
public:
  explicit gauge_hold(counter& gauge) : gauge_(&gauge) { ++*gauge_; }
  gauge_hold(gauge_hold&& other) noexcept : gauge_(other.gauge_) {
    other.gauge_ = nullptr;
  }
  gauge_hold(const gauge_hold&) = delete;
  gauge_hold& operator=(const gauge_hold&) = delete;
  gauge_hold& operator=(gauge_hold&&) = delete;
  ~gauge_hold() {
    if (gauge_)
      --*gauge_;
  }

private:
  counter* gauge_;
};

/// What the actors of one run did, shared by all of them (relaxed atomics:
/// these are statistics, not synchronisation). Survives actor restarts.
struct run_metrics {
  // writer
  counter orders_placed{0};
  counter orders_replayed{0};
  counter orders_conflicted{0};
  counter events_appended{0};
  counter commits{0};
  counter writer_errors{0};
  /// Requests whose group's COMMIT answer was lost with the connection,
  /// and what was found out about them since: by the writer's lookup, or
  /// by their retry (a replay: it had committed; a new write: it had not).
  counter commits_unknown{0};
  counter unknown_found_committed{0};
  counter unknown_found_not_committed{0};
  // relays
  counter claims{0};
  counter claimed_rows{0};
  counter enqueued{0};
  counter acked{0};
  counter fenced_acks_rejected{0};
  counter lease_takeovers{0};
  counter rows_failed{0};
  counter publish_errors{0};
  /// Rows of batches not pushed because their lease ran out, by the
  /// relay's own monotonic clock, between claim and push.
  counter expired_leases_dropped{0};
  counter released{0};
  // consumers
  counter applied{0};
  counter duplicates_absorbed{0};
  counter dead_lettered{0};
  counter order_violations{0};
  counter recovered_entries{0};
  counter consumer_errors{0};
  /// Pops, applies, removes and recoveries (the consumers' and the
  /// coordinator's) the fence refused: this process's lock acquisition had
  /// lapsed or gone to another process.
  counter fenced_moves_refused{0};
  // supervision
  /// The coordinator's checks so far: while it grows the process is alive
  /// (/healthz, the systemd watchdog; cli/service_presence.hpp).
  counter supervisor_checks{0};
  /// 1 once the coordinator stops the run (its checks end then): alive,
  /// stopping, not ready.
  counter stopping{0};
  counter relay_restarts{0};
  counter consumer_restarts{0};
  counter injected_crashes{0};
  counter zombie_pauses{0};
  /// A gauge: batches this process's relays hold across an injected pause
  /// now. A bounded run is not drained while one is held: the relay
  /// publishes it when it wakes (a duplicate the fence keeps from being
  /// acked), after the stores may already have looked drained.
  counter paused_batches{0};
  /// Calls of relays and consumers that met an outage (Redis unreachable,
  /// a replica, out of memory; the database locked) and will retry: a run
  /// waiting on an outage is not stalled.
  counter outage_retries{0};
  /// Refusals of the pipeline's commands that name no server state (an
  /// ACL, a proxy): retried like an outage, but not counted in
  /// outage_retries, so a bounded run they hold up stalls, naming them.
  refusal_log refusals;
  /// What the database answered the writer's commits with, when it refused
  /// them for good reason of its own (no privilege on a table, a file it
  /// cannot write; not a lock, which is waited out): `where` "database".
  /// A bounded run whose writer it keeps from placing anything stalls,
  /// naming it.
  refusal_log writer_refusals;

  latency_recorder commit_to_processed;
  /// Commit to the broker's acknowledgement of the publish (the relay's
  /// share of the latency), recorded when the row is acked.
  latency_recorder commit_to_published;
};

} // namespace outbox::metrics
