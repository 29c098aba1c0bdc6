#pragma once

// The audit's checks that every published event is accounted for by its
// id (published_processed), that none waits unapplied in the dead-letter
// list (dead_letters), and that no order's lifecycle event was written
// twice (events_once). They read the TEMP tables of audit_tables.hpp.

#include "audit/conservation.hpp"
#include "broker/broker_stats.hpp"
#include "broker/inbox_reader.hpp"
#include "storage/sqlite_fwd.hpp"

namespace outbox::audit {

/// Every PUBLISHED row is processed, waits (queued, in a processing list,
/// dead-lettered), was dropped by an operator's decision, or lost its dedup
/// record to `outbox trim`; any other is lost and named, whether the queues are
/// drained or not. A record counts as trimmed only where the inbox's own state
/// says the event was applied: published before the latest trim cutoff, its seq
/// at or below its aggregate's applied seq and not one the gaps hash names
/// (skipped, dead or replayed). Purge and trim in any order cannot excuse a
/// loss. For an aggregate whose gaps overflowed (a jump too long to record), as
/// many as trim removed of it (trimmed_aggregates). Skipped when a recovery
/// moved entries while they were read (`queues.settled`).
check published_processed(SQLite::Database& db,
                          const broker::inbox_snapshot& inbox,
                          const broker::broker_stats& queues,
                          std::int64_t published);

/// No outbox event waits unapplied in the dead-letter list: each is named,
/// with the remedies that end the finding (replay once the cause is fixed,
/// or drop with a recorded decision).
check dead_letters(SQLite::Database& db, const broker::broker_stats& queues);

/// No order has two OrderPlaced, OrderPaid or OrderShipped rows: the load
/// generator and `place-order` write each once per order, so a second is
/// an append that was made twice (an unknown commit retried blindly).
check events_once(SQLite::Database& db);

} // namespace outbox::audit
