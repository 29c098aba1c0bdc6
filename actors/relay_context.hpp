#pragma once

// What a relay is given (relay_setup) and what its decisions work on
// (relay_context): its ports, the batch it holds across a pause, the batch
// the database has not settled yet, its outages. Plain C++: relay_core owns
// one, and the relay's helpers (relay_publish, relay_settle,
// relay_refusal, relay_log) are functions over it.

#include "actors/crash_injector.hpp"
#include "actors/log_lines.hpp"
#include "actors/ports.hpp"
#include "config/settings.hpp"
#include "metrics/run_metrics.hpp"
#include "storage/clock.hpp"
#include "storage/database.hpp"
#include "storage/lease_store.hpp"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace outbox::actors {

using storage::clock_function;

/// Everything a relay needs; the coordinator builds one per incarnation.
struct relay_setup {
  /// The lease owner: unique across processes and restarts.
  std::string name;
  storage::db_options db;
  storage::lease_policy lease;
  int poll_interval_ms = 50;
  int idle_poll_max_ms = 1000;
  config::crash_settings crash;
  std::function<std::unique_ptr<publish_port>()> make_publisher;
  clock_function clock;
  std::shared_ptr<metrics::run_metrics> metrics;
  /// This relay's own clock for its leases (ms, any origin): it never
  /// jumps with the wall clock and counts a suspended host's sleep
  /// (CLOCK_BOOTTIME when empty). Tests drive it.
  clock_function monotonic = {};
};

/// A batch whose outcome the database has not taken yet: the ack of rows
/// Redis took, or the hand-back of rows the relay did not publish, met a
/// database outage. It is settled before the next claim, so an outage
/// charges no row an attempt (unless it outlasts the lease and another
/// relay takes the rows over before this one is back).
struct unsettled_batch {
  /// Rows Redis took: to ack, fenced.
  storage::claim published;
  /// When Redis took them (the ack's published_at).
  storage::millis published_at = 0;
  /// Rows not published: to hand back, fenced, their attempt refunded.
  std::vector<storage::event_lease> unpublished;
  /// A settle failed already: a retried ack may find rows the failed one
  /// acked after all (its answer was lost), which the fence then refuses.
  bool retried = false;
};

/// A claimed batch held across an injected pause, counted in
/// run_metrics::paused_batches while it is held.
struct paused_batch {
  storage::claim claimed;
  metrics::gauge_hold held;
};

/// A relay's setup, ports and the batches and outages it carries from one
/// cycle to the next.
struct relay_context {
  relay_setup setup;
  std::unique_ptr<storage::database> db;
  std::unique_ptr<storage::lease_store> store;
  std::unique_ptr<publish_port> publisher;
  std::unique_ptr<crash_injector> crashes;
  /// The current idle poll interval (doubles while nothing is claimable).
  int idle_delay_ms = 0;
  /// When the batch being published was claimed, by setup.monotonic.
  storage::millis claimed_monotonic = 0;
  /// Leases held across a zombie pause; released on graceful shutdown.
  std::optional<paused_batch> paused;
  /// An ack or release the database did not take; see unsettled_batch.
  std::optional<unsettled_batch> unsettled;
  /// Outages this relay is riding out: logged when they begin and end, not
  /// on every retry.
  outage redis;
  outage database;
};

} // namespace outbox::actors
