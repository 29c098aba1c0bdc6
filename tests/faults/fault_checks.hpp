#pragma once

#include "broker/connection.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace outbox::test {

/// Where a fault scenario's pipeline lives: what `outbox run` was pointed at.
struct pipeline_location {
  /// The SQLite file, or the PostgreSQL URI.
  std::string db_path;
  /// The Redis the processes used.
  broker::endpoint redis;
  /// The config file the processes ran with (Redis key names, partitions);
  /// empty: the built-in defaults.
  std::string config_path;
  /// Working directory for `outbox verify` (empty: the test's own).
  std::string cwd;
  /// Under Sentinel: the sentinels that name the master (`redis` is then
  /// where it was first).
  std::optional<broker::sentinel_set> sentinel = {};
};

/// What was read from outside (the database, Redis) after a scenario.
struct pipeline_figures {
  std::int64_t orders = 0;
  std::int64_t outbox_rows = 0;
  std::int64_t published = 0;
  /// Rows not PUBLISHED (PENDING, SENDING or FAILED).
  std::int64_t unpublished = 0;
  std::int64_t failed_rows = 0;
  /// HLEN processed.
  std::int64_t processed = 0;
  /// Outbox rows whose event_id is not in `processed`: lost events.
  std::int64_t lost = 0;
  /// `processed` entries without an outbox row.
  std::int64_t orphans = 0;
  /// From the counters hash (absent counters are 0).
  std::int64_t consumed = 0;
  std::int64_t duplicates = 0;
  std::int64_t dead_lettered = 0;
  std::int64_t order_violations = 0;
  /// Entries still in the queue lists / in processing lists.
  std::int64_t queued = 0;
  std::int64_t in_processing = 0;
  /// Skus whose inventory.reserved differs from the ordered quantities.
  std::int64_t reserved_mismatches = 0;
  /// Aggregates whose aggregate_seq entry differs from their max seq.
  std::int64_t seq_mismatches = 0;
};

/// The outcome of check_pipeline: figures, and one line per broken invariant.
struct pipeline_check {
  pipeline_figures figures;
  /// Empty when every invariant holds.
  std::vector<std::string> violations;
  /// What `outbox verify --json` printed.
  std::string verify_output;

  bool ok() const { return violations.empty(); }
};

/// Checks a finished (drained) pipeline from outside, with its own database
/// and Redis connections and the real `outbox verify --json`:
/// - every outbox row is PUBLISHED;
/// - `processed` holds each event once: HLEN == outbox rows, every row's
///   event_id is in it and every entry of it has a row;
/// - inventory.reserved per sku equals SUM(orders.qty) per sku, exactly;
/// - first deliveries kept seq order: counters.order_violations is 0 and
///   aggregate_seq holds exactly the max seq of every aggregate;
/// - the queue lists and every processing list are empty;
/// - `outbox verify --json` exits 0 with every check "passed".
/// Dead-lettered entries are reported in the figures, not judged here.
pipeline_check check_pipeline(const pipeline_location& where);

/// The first column of the first row of `sql` as a number, from the
/// database `db` names (the SQLite file or the PostgreSQL URI), with a
/// connection of its own. Throws when it cannot be read.
std::int64_t database_number(const std::string& db, const std::string& sql);

/// check_pipeline, reporting each violation as a GoogleTest failure
/// (ADD_FAILURE, so the test goes on), and recording the run for
/// scripts/chaos under the test suite's name (no kills). Returns the figures.
pipeline_figures expect_pipeline_intact(const pipeline_location& where);

/// Load multiplier for longer runs (scripts/chaos): OUTBOX_CHAOS_SCALE as a
/// positive number, 1 when unset or malformed.
double chaos_scale();

/// `base` scaled by chaos_scale(), at least 1.
int scaled(int base);

/// Seed for a scenario's random choices: OUTBOX_FAULT_SEED when set, else
/// `fallback`. Tests print it so a failing run can be repeated.
std::uint64_t fault_seed(std::uint64_t fallback);

/// Appends one JSON line describing a scenario run to the file named by
/// OUTBOX_CHAOS_REPORT (nothing when unset): {"scenario", "events", "kills",
/// "duplicates", "lost", "order_violations", "seconds", "ok", ...figures}.
void record_chaos_run(const std::string& scenario, const pipeline_check& check,
                      std::int64_t kills, double seconds);

} // namespace outbox::test
