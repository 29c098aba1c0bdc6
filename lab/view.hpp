#pragma once

// What the lab coordinator reads, resets and writes outside the actors it
// drives: counts from app.db and Redis for the steps' end conditions and
// the report, the queue's contents for the checks, the output files.
// CAF-free; the coordinator owns one on its own connections. It composes
// reads of storage/ and broker/: no SQL or Redis command is written here.

#include "broker/connection.hpp"
#include "config/settings.hpp"
#include "lab/app_reads.hpp"
#include "lab/plan.hpp"
#include "storage/outbox_views.hpp"
#include "storage/sqlite_fwd.hpp"

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace outbox::lab {

/// The outbox table's state, for the relay steps' end condition.
struct outbox_progress {
  std::int64_t orders = 0;
  std::int64_t pending = 0;
  std::int64_t sending = 0;
  std::int64_t published = 0;
  std::int64_t failed = 0;
  /// SENDING rows whose lease has run out (a relay may take them over).
  std::int64_t expired_leases = 0;
  /// Who holds SENDING rows, and until when.
  std::vector<storage::owner_leases> leases;

  /// Nothing left for a relay to do: no PENDING and no SENDING row.
  bool drained() const { return pending == 0 && sending == 0; }
};

/// The queue's state, for the consumer step's end condition.
struct queue_progress {
  /// LLEN outbox.events.
  std::int64_t queued = 0;
  /// Entries in consumers' processing lists.
  std::int64_t in_processing = 0;
  /// HLEN processed: unique events handled.
  std::int64_t processed = 0;
  /// The inbox's counters: first deliveries, duplicates absorbed, entries
  /// dead-lettered.
  std::int64_t consumed = 0;
  std::int64_t duplicates = 0;
  std::int64_t dead_lettered = 0;

  /// Every entry that ever entered the queue: each one is either still
  /// queued, in a processing list, or was counted by the inbox script once
  /// it was taken off (consumed, duplicate or dead-lettered).
  std::int64_t enqueued() const {
    return queued + in_processing + consumed + duplicates + dead_lettered;
  }
};

/// The four numbers of report.txt.
struct lab_counts {
  std::int64_t orders = 0;
  std::int64_t outbox = 0;
  std::int64_t enqueued = 0;
  std::int64_t processed_unique = 0;
};

/// report.txt: exactly four lines, in the seed's order and format.
std::string report_text(const lab_counts& counts);

/// The verdict on the queue's per-aggregate order.
struct order_verdict {
  /// Aggregates and entries looked at.
  std::size_t aggregates = 0;
  std::size_t entries = 0;
  /// One line per problem ("aggregate order-7: seq 3 entered before seq 2").
  std::vector<std::string> problems;

  bool ok() const { return problems.empty(); }
};

/// Checks that, for every aggregate_id, the first occurrences of its events
/// in `entries` (the queue from head to tail) come in ascending seq.
/// Repeated event_ids (at-least-once duplicates) are skipped; an entry that
/// does not parse is a problem.
order_verdict check_queue_order(const std::vector<std::string>& entries);

/// How many of `entries` carry this event_id.
std::int64_t count_event(const std::vector<std::string>& entries,
                         const std::string& event_id);

/// The lab's view of app.db and Redis, on its own connections.
class lab_view {
public:
  /// `s` from lab_settings. Opens nothing yet: app.db is opened on first
  /// use (after init), Redis on the first command.
  lab_view(const config::settings& s, lab_files files);
  ~lab_view();
  lab_view(const lab_view&) = delete;
  lab_view& operator=(const lab_view&) = delete;

  /// Deletes the lab's Redis keys (queue, processed, counters, processing
  /// lists, ...) and then its files. Returns one line per thing reset.
  /// Throws broker_error before any file is touched if Redis is down.
  std::vector<std::string> reset();

  /// Counts of the outbox table. Throws store_error.
  outbox_progress outbox(storage::millis now);

  /// Lengths and counters in Redis. Throws broker_error.
  queue_progress queue();

  /// The whole queue list, head first (LRANGE outbox.events 0 -1).
  std::vector<std::string> queue_entries();

  /// Puts entries left in processing lists by dead consumers back at the
  /// head of the queue. Returns how many moved.
  std::size_t recover_processing();

  /// COUNT(*) of orders and outbox in app.db; enqueued and HLEN processed
  /// from Redis.
  lab_counts counts();

  /// (seq, created_at) of an aggregate's outbox rows, by seq.
  std::vector<aggregate_row> aggregate_rows(const std::string& aggregate_id);

  /// The connection to the lab's Redis.
  broker::connection& redis() { return redis_; }

  const config::settings& settings() const { return settings_; }
  const lab_files& files() const { return files_; }

private:
  SQLite::Database& db();

  config::settings settings_;
  lab_files files_;
  broker::connection redis_;
  std::unique_ptr<SQLite::Database> db_;
  std::unique_ptr<storage::outbox_views> store_;
};

} // namespace outbox::lab
