#pragma once

#include "audit/type_figures.hpp"
#include "broker/broker_stats.hpp"
#include "broker/inbox_reader.hpp"
#include "storage/ledger.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace outbox::audit {

/// One conservation check (seed 001: conservation beats success logs).
struct check {
  std::string name;
  enum class state { passed, failed, skipped } result = state::passed;
  /// What was compared, or what broke, with counts and a few example ids.
  std::string detail;
};

/// The outcome of all checks plus the figures they were computed from.
struct verdict {
  std::vector<check> checks;
  std::int64_t outbox_rows = 0;
  std::int64_t published = 0;
  std::int64_t unpublished = 0; // PENDING + SENDING
  std::int64_t failed_rows = 0;
  std::int64_t processed = 0;
  std::int64_t queued = 0;
  std::int64_t in_processing = 0;
  std::int64_t dead_lettered = 0;
  std::int64_t order_violations = 0;
  /// Per event type: published, and processed of those (a published
  /// event whose record `outbox trim` deleted counts as published only).
  std::map<std::string, type_figures> by_type;

  /// True when no check failed (skipped checks do not fail).
  bool ok() const;
  /// {"ok":..., "checks":[{"name","result","detail"}], figures...}
  std::string to_json() const;
  /// One line per check, for people.
  std::string to_text() const;
};

class audit_tables;

/// Compares what the database says was committed and published with what
/// the consumers applied. Pure: the inputs are snapshots, so tests can feed
/// any state (they are loaded into an in-memory audit_tables and judged by
/// the overload below). The snapshots are taken in this order (audit_pipeline
/// does): `ledger`, then `queues`, then `inbox`, then `later_rows` (rows
/// committed after `ledger` was read; only needed when `inbox` names unknown
/// events). Checks:
/// - published_processed, dead_letters, events_once: see
///   delivery_checks.hpp (every published event accounted for by its id,
///   none waiting unapplied in the dead-letter list, no lifecycle event of
///   an order written twice).
/// - no_orphan_effects: every `processed` entry has an outbox row, or is
///   purged history: its aggregate's remaining rows all have higher seqs
///   (`outbox purge` deletes the oldest published rows of an aggregate), or
///   it has none left and `aggregate_heads` (the last seq of aggregates a
///   purge emptied) covers the seq; purged OrderPlaced effects count in
///   reserved_matches from the inbox's own record (sku, qty).
/// - reserved_matches: effects:inventory.reserved per sku equals the sum of qty
/// of
///   processed OrderPlaced events plus the trimmed ones' summed effect;
///   skipped while consumers (or a trim) were changing it.
/// - applied_once: per aggregate, records plus trimmed records do not
///   outnumber its events (an event applied again after a trim).
/// - order_kept: the consumers counted no order violation.
verdict
evaluate(const std::vector<storage::ledger_row>& ledger,
         const broker::inbox_snapshot& inbox,
         const broker::broker_stats& queues,
         const std::vector<storage::ledger_row>& later_rows = {},
         const std::map<std::string, std::int64_t>& aggregate_heads = {});

/// The same checks over snapshots kept in `tables` (the ledger, later rows,
/// heads, `processed` and trimmed_aggregates; `inbox`'s maps of those are
/// not read), streamed from SQL: memory holds the per-sku maps and a few
/// example ids, not the events. Throws store_error.
verdict evaluate(audit_tables& tables, const broker::inbox_snapshot& inbox,
                 const broker::broker_stats& queues);

} // namespace outbox::audit
